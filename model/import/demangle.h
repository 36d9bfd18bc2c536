// SPDX-License-Identifier: MIT
#pragma once

// Kernel names as the importers store them: C++ symbols demangled (the Itanium ABI, as nvprof and
// AMD's tools write them), and AMD code-object suffixes dropped, so that a kernel reads the same
// whichever tool recorded it (Kineto on ROCm names kernels without them).
//
// Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace gapscope::model::importer {

// `name` demangled when it is a mangled C++ symbol ("_Z..."), else unchanged; a symbol that does not
// demangle is kept as written.
std::string demangle(std::string_view name);

// A ROCm kernel symbol as a kernel name: the kernel descriptor's ".kd" suffix dropped, in either
// form the tools write it ("_Z...Ev.kd", "__amd_rocclr_copyBuffer.kd", "void k<double>(...) [clone
// .kd]"), then demangled.
std::string rocmKernelName(std::string_view symbol);

} // namespace gapscope::model::importer
