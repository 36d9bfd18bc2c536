// SPDX-License-Identifier: MIT
#pragma once

// Helpers of the kernel self-check (selfcheck.cpp, selfcheckgemv.cpp): device buffers, transfers,
// random bf16 data and the PASS/FAIL report. Internal to kernels/. Threading: one rank's thread.

#include "kernels/cudastatus.h"
#include "kernels/numerics.h"
#include "model/base/status.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace gapscope::kernels::check {

// A device allocation that frees itself.
struct DevBuf {
    void* p = nullptr;
    size_t n = 0;
    DevBuf() = default;
    DevBuf(const DevBuf&) = delete;
    ~DevBuf()
    {
        if (p)
            cudaFree(p);
    }
    Status alloc(size_t bytes)
    {
        n = bytes;
        GS_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
        GS_CUDA(cudaMemset(p, 0, bytes ? bytes : 1));
        return Status::ok();
    }
    template <typename T> T* as() const { return static_cast<T*>(p); }
};

template <typename T> Status download(std::vector<T>& out, const DevBuf& b)
{
    out.resize(b.n / sizeof(T));
    GS_CUDA(cudaDeviceSynchronize());
    GS_CUDA(cudaMemcpy(out.data(), b.p, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return Status::ok();
}

template <typename T> Status upload(DevBuf& b, const std::vector<T>& v)
{
    GS_TRY(b.alloc(v.size() * sizeof(T)));
    GS_CUDA(cudaMemcpy(b.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return Status::ok();
}

inline std::vector<uint16_t> randomBf16(size_t n, std::mt19937& rng, float scale = 1.f)
{
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<uint16_t> v(n);
    for (auto& x : v)
        x = num::floatToBf16(d(rng));
    return v;
}

inline std::vector<double> toDouble(const std::vector<uint16_t>& v)
{
    std::vector<double> d(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        d[i] = num::bf16ToFloat(v[i]);
    return d;
}

struct Report {
    std::vector<std::string>& lines;
    int& failures;
    void check(bool ok, const std::string& name, const std::string& detail)
    {
        lines.push_back(std::string(ok ? "PASS " : "FAIL ") + name + ": " + detail);
        failures += ok ? 0 : 1;
    }
    void error(const std::string& name, double err, double bound)
    {
        char b[96];
        std::snprintf(b, sizeof b, "rel err %.2e (bound %.0e)", err, bound);
        check(err <= bound, name, b);
    }
};

} // namespace gapscope::kernels::check
