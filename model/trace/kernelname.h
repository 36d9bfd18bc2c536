// SPDX-License-Identifier: MIT
#pragma once

// The short form of a kernel name that the viewer and gapscope-cli show: a demangled C++ signature
// loses its return type, its template arguments collapse to `<…>` and its parameter list to `(…)`
// (`()` when empty); namespaces stay unless asked otherwise. What follows the parameter list (a
// trailing `const`, a lambda's enclosing scope) is dropped. Two exceptions keep names apart: a
// single template argument that is one plain identifier stays (`cutlass::Kernel<cutlass_80_...>`),
// and `(anonymous namespace)` counts as a namespace. A name that is not a C++ signature (no
// parameter list or template argument list directly after an identifier: "Memcpy HtoD (Pageable ->
// Device)", "ProfilerStep#3", "triton_poi_fused_add_0") is returned as it is.
//
// Cost: O(length), one allocation. Pure; thread-safe.

#include <string>
#include <string_view>

namespace gapscope::model {

enum class KernelNamespaces { Keep, Drop };

std::string shortKernelName(std::string_view full, KernelNamespaces namespaces = KernelNamespaces::Keep);

} // namespace gapscope::model
