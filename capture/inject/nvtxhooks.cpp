// SPDX-License-Identifier: MIT
#include "capture/inject/nvtxhooks.h"

#include "capture/inject/channels.h"
#include "capture/inject/injectlog.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <sys/syscall.h>
#include <unistd.h>

// Opaque NVTX handles are defined by the tool.
struct nvtxStringRegistration_st {
    char text[64];
};
struct nvtxDomainRegistration_st {
    char name[64];
};

namespace gapscope::capture::inject {

namespace {

std::atomic<bool> g_installed { false };
std::atomic<uint64_t> g_nextRangeId { 1 };
std::atomic<bool> g_keepStack { false };
thread_local int t_depth = 0;
// The names of the open push ranges (levels below kNvtxStackDepth), while g_keepStack.
thread_local char t_stack[kNvtxStackDepth][kNvtxStackNameBytes];
thread_local bool t_stackValid[kNvtxStackDepth];

void copyText(char* dst, size_t cap, const char* src, uint8_t& truncated)
{
    size_t n = 0;
    if (src) {
        while (n + 1 < cap && src[n])
            ++n;
        std::memcpy(dst, src, n);
        truncated = src[n] != 0 ? 1 : 0;
    }
    dst[n] = 0;
}

void copyWide(char* dst, size_t cap, const wchar_t* src, uint8_t& truncated)
{
    size_t n = 0;
    if (src) {
        while (n + 1 < cap && src[n]) {
            dst[n] = src[n] < 128 ? char(src[n]) : '?';
            ++n;
        }
        truncated = src[n] != 0 ? 1 : 0;
    }
    dst[n] = 0;
}

void messageOf(const nvtxEventAttributes_t* a, char* dst, size_t cap, uint8_t& truncated)
{
    dst[0] = 0;
    if (!a)
        return;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        copyText(dst, cap, a->message.ascii, truncated);
        break;
    case NVTX_MESSAGE_TYPE_UNICODE:
        copyWide(dst, cap, a->message.unicode, truncated);
        break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        if (a->message.registered)
            copyText(dst, cap, a->message.registered->text, truncated);
        break;
    default:
        break;
    }
}

void messageOf(const nvtxEventAttributes_t* a, NvtxRecord& r)
{
    messageOf(a, r.name, sizeof(r.name), r.truncated);
}

// Returns the mode, 0 meaning "do nothing".
int mode()
{
    return channels().nvtxMode.load(std::memory_order_relaxed);
}

void push(NvtxRecord& r)
{
    Channels& ch = channels();
    r.time = nowRealtimeNs();
    r.tid = currentTid();
    auto* q = ch.nvtx.load(std::memory_order_acquire);
    if (!q || !q->tryPush(r))
        ch.nvtxDropped.fetch_add(1, std::memory_order_relaxed);
}

// The record's text: the ASCII argument when given, else the attributes' message.
void nameOf(const nvtxEventAttributes_t* attr, const char* ascii, NvtxRecord& r)
{
    if (ascii)
        copyText(r.name, sizeof(r.name), ascii, r.truncated);
    else
        messageOf(attr, r);
}

uint8_t depthOf(int depth)
{
    return uint8_t(depth < 255 ? depth : 255);
}

int rangePush(const nvtxEventAttributes_t* attr, const char* ascii, nvtxDomainHandle_t domain)
{
    const int level = t_depth++;
    if (level >= 0 && level < kNvtxStackDepth) {
        const bool keep = g_keepStack.load(std::memory_order_relaxed);
        t_stackValid[level] = keep;
        if (keep) {
            uint8_t truncated = 0;
            if (ascii)
                copyText(t_stack[level], kNvtxStackNameBytes, ascii, truncated);
            else
                messageOf(attr, t_stack[level], kNvtxStackNameBytes, truncated);
        }
    }
    if (mode() == 0)
        return level;
    NvtxRecord r;
    r.op = NvtxOp::Push;
    r.depth = depthOf(level);
    r.domain = uint64_t(reinterpret_cast<uintptr_t>(domain));
    nameOf(attr, ascii, r);
    push(r);
    return level;
}

int rangePop(nvtxDomainHandle_t domain)
{
    if (t_depth > 0)
        --t_depth;
    if (mode() == 2) {
        NvtxRecord r;
        r.op = NvtxOp::Pop;
        r.depth = depthOf(t_depth);
        r.domain = uint64_t(reinterpret_cast<uintptr_t>(domain));
        push(r);
    }
    return t_depth;
}

nvtxRangeId_t rangeStart(const nvtxEventAttributes_t* attr, const char* ascii, nvtxDomainHandle_t domain)
{
    const nvtxRangeId_t id = g_nextRangeId.fetch_add(1, std::memory_order_relaxed);
    if (mode() == 0)
        return id;
    NvtxRecord r;
    r.op = NvtxOp::Start;
    r.rangeId = id;
    r.domain = uint64_t(reinterpret_cast<uintptr_t>(domain));
    nameOf(attr, ascii, r);
    push(r);
    return id;
}

void rangeEnd(nvtxRangeId_t id)
{
    if (mode() != 2)
        return;
    NvtxRecord r;
    r.op = NvtxOp::End;
    r.rangeId = id;
    push(r);
}

void mark(const nvtxEventAttributes_t* attr, const char* ascii)
{
    if (mode() != 2)
        return;
    NvtxRecord r;
    r.op = NvtxOp::Mark;
    r.depth = depthOf(t_depth);
    nameOf(attr, ascii, r);
    push(r);
}

// NVTX entry points (C ABI, the impl function types of nvtxTypes.h).
int NVTX_API hRangePushA(const char* m)
{
    return rangePush(nullptr, m, nullptr);
}
int NVTX_API hRangePushEx(const nvtxEventAttributes_t* a)
{
    return rangePush(a, nullptr, nullptr);
}
int NVTX_API hRangePop()
{
    return rangePop(nullptr);
}
nvtxRangeId_t NVTX_API hRangeStartA(const char* m)
{
    return rangeStart(nullptr, m, nullptr);
}
nvtxRangeId_t NVTX_API hRangeStartEx(const nvtxEventAttributes_t* a)
{
    return rangeStart(a, nullptr, nullptr);
}
void NVTX_API hRangeEnd(nvtxRangeId_t id)
{
    rangeEnd(id);
}
void NVTX_API hMarkA(const char* m)
{
    mark(nullptr, m);
}
void NVTX_API hMarkEx(const nvtxEventAttributes_t* a)
{
    mark(a, nullptr);
}
int NVTX_API hDomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    return rangePush(a, nullptr, d);
}
int NVTX_API hDomainRangePop(nvtxDomainHandle_t d)
{
    return rangePop(d);
}
nvtxRangeId_t NVTX_API hDomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    return rangeStart(a, nullptr, d);
}
void NVTX_API hDomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id)
{
    rangeEnd(id);
}
void NVTX_API hDomainMarkEx(nvtxDomainHandle_t, const nvtxEventAttributes_t* a)
{
    mark(a, nullptr);
}

nvtxStringHandle_t NVTX_API hDomainRegisterStringA(nvtxDomainHandle_t, const char* s)
{
    auto* h = new (std::nothrow) nvtxStringRegistration_st;
    if (h) {
        uint8_t truncated = 0;
        copyText(h->text, sizeof(h->text), s, truncated);
    }
    return h;
}

nvtxStringHandle_t NVTX_API hDomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s)
{
    auto* h = new (std::nothrow) nvtxStringRegistration_st;
    if (h) {
        uint8_t truncated = 0;
        copyWide(h->text, sizeof(h->text), s, truncated);
    }
    return h;
}

nvtxDomainHandle_t NVTX_API hDomainCreateA(const char* name)
{
    auto* h = new (std::nothrow) nvtxDomainRegistration_st;
    if (h) {
        uint8_t truncated = 0;
        copyText(h->name, sizeof(h->name), name, truncated);
    }
    return h;
}

void NVTX_API hDomainDestroy(nvtxDomainHandle_t) { } // handles stay valid: records may still point at them

template <typename F> void setSlot(NvtxFunctionTable table, unsigned int size, unsigned int id, F fn)
{
    if (table && id < size && table[id])
        *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

} // namespace

int64_t nowRealtimeNs()
{
    timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

uint32_t currentTid()
{
    thread_local uint32_t tid = uint32_t(syscall(SYS_gettid));
    return tid;
}

bool nvtxHooksInstalled()
{
    return g_installed.load(std::memory_order_acquire);
}

void setNvtxStackKept(bool on)
{
    g_keepStack.store(on, std::memory_order_relaxed);
}

std::vector<std::string> nvtxStackOfThisThread()
{
    std::vector<std::string> out;
    const int depth = t_depth;
    out.reserve(size_t(depth > 0 ? depth : 0));
    for (int level = 0; level < depth; ++level) {
        if (level >= kNvtxStackDepth)
            out.emplace_back("\u2026");
        else
            out.emplace_back(t_stackValid[level] ? t_stack[level] : "?");
    }
    return out;
}

} // namespace gapscope::capture::inject

using namespace gapscope::capture::inject;

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    if (!getExportTable)
        return 0;
    auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!callbacks || !callbacks->GetModuleFunctionTable) {
        injectLog("NVTX offered no callback table; NVTX ranges will not be seen");
        return 0;
    }
    NvtxFunctionTable core = nullptr;
    unsigned int coreSize = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &coreSize) || !core) {
        injectLog("NVTX core function table unavailable; NVTX ranges will not be seen");
        return 0;
    }
    setSlot(core, coreSize, NVTX_CBID_CORE_MarkEx, hMarkEx);
    setSlot(core, coreSize, NVTX_CBID_CORE_MarkA, hMarkA);
    setSlot(core, coreSize, NVTX_CBID_CORE_RangeStartEx, hRangeStartEx);
    setSlot(core, coreSize, NVTX_CBID_CORE_RangeStartA, hRangeStartA);
    setSlot(core, coreSize, NVTX_CBID_CORE_RangeEnd, hRangeEnd);
    setSlot(core, coreSize, NVTX_CBID_CORE_RangePushEx, hRangePushEx);
    setSlot(core, coreSize, NVTX_CBID_CORE_RangePushA, hRangePushA);
    setSlot(core, coreSize, NVTX_CBID_CORE_RangePop, hRangePop);

    NvtxFunctionTable core2 = nullptr;
    unsigned int core2Size = 0;
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2Size) && core2) {
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainMarkEx, hDomainMarkEx);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainRangeStartEx, hDomainRangeStartEx);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainRangeEnd, hDomainRangeEnd);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainRangePushEx, hDomainRangePushEx);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainRangePop, hDomainRangePop);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainRegisterStringA, hDomainRegisterStringA);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainRegisterStringW, hDomainRegisterStringW);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainCreateA, hDomainCreateA);
        setSlot(core2, core2Size, NVTX_CBID_CORE2_DomainDestroy, hDomainDestroy);
    }
    g_installed.store(true, std::memory_order_release);
    injectLog("NVTX hooks installed (core %u slots, core2 %u slots)", coreSize, core2Size);
    return 1;
}
