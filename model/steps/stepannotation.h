// SPDX-License-Identifier: MIT
#pragma once

// StepAnnotation: what a host range's name says about a step, for the names serving engines and
// profilers really write (case-insensitive):
//
//   SGLang (ModelRunner.forward, under torch.profiler):  step[DECODE bs=32], step[EXTEND bs=4 toks=8192],
//       step[MIXED bs=66 c=2 g=64 c_sq=2048 ...], step[TARGET_VERIFY bs=32], step[DRAFT_EXTEND_V2 bs=8],
//       step[IDLE bs=0]; the lower-case forms step[decode bs=N], step[prefill bs=N toks=T] too.
//   vLLM (Worker.annotate_profile around execute_model):  execute_context_1(4)_generation_1(1) (requests
//       and, in parentheses, scheduled tokens; more generation tokens than requests is a verify step of
//       speculative decoding), execute_5_context_1(sq4sk4..)_generation_1(sq1sk11..) (detailed form),
//       execute_new_2_cached_30 (older: new and cached requests).
//   gapscope's own decode workloads: decode_step, "decode step".
//   torch.profiler: ProfilerStep#N, one iteration of the user's loop: it encloses steps (a generate()
//       call holds many forwards) but is not one by itself unless nothing finer is found inside.
//
// Threading: pure functions.

#include "model/trace/tracemeta.h"

#include <cstdint>
#include <string_view>

namespace gapscope::model {

struct StepAnnotation {
    enum class Role { None, Step, Enclosing };
    Role role = Role::None;
    StepKind kind = StepKind::Unknown;
    uint32_t batch = 0; // requests, 0 when the name does not say
    uint32_t tokens = 0; // tokens processed, 0 when the name does not say
    const char* engine = ""; // "sglang", "vllm", "gapscope", "torch.profiler"

    static StepAnnotation parse(std::string_view name);
};

} // namespace gapscope::model
