// SPDX-License-Identifier: Apache-2.0
#pragma once
// The mechanism that FFT and Matmul share for the stream contract (docs/getting-started.md, blocking rule;
// docs/streams.md), one cohesive header each:
//  - execution_target.hpp: where a call runs and whether it blocks;
//  - phase.hpp: phase ordering across streams and the one begin-phase helper;
//  - runtime/device_buffer.hpp: workspace and staging memory, stream-ordered, kept or released per call;
//  - object_state.hpp: the lifecycle checks (planned, operand present, freed).

#include "plan/execution_target.hpp"
#include "plan/object_state.hpp"
#include "plan/phase.hpp"
#include "runtime/device_buffer.hpp"
