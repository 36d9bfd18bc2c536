// SPDX-License-Identifier: MIT
#include "capture/inject/ncclplugin.h"

#include "capture/inject/channels.h"
#include "capture/inject/injectlog.h"
#include "capture/inject/nvtxhooks.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <sys/types.h>

// ---------------------------------------------------------------------------------------------
// The ABI, declared after NCCL's ext-profiler headers (only the members this plugin reads).

extern "C" {

typedef int ncclResult_t; // ncclSuccess = 0
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

enum {
    kNcclProfileGroup = 1 << 0,
    kNcclProfileColl = 1 << 1,
    kNcclProfileP2p = 1 << 2,
};

struct GsNcclCollV5 {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
    void* parentGroup;
};
struct GsNcclP2pV5 {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void* parentGroup;
};
struct GsNcclDescrV5 {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        GsNcclCollV5 coll;
        GsNcclP2pV5 p2p;
        uint8_t largest[96];
    };
};

struct GsNcclCollV4 {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
};
struct GsNcclP2pV4 {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
};
struct GsNcclDescrV4 {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        GsNcclCollV4 coll;
        GsNcclP2pV4 p2p;
    };
};

struct GsNcclCollV3 {
    const char* name;
    uint64_t commHash;
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nMaxChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
};
struct GsNcclP2pV3 {
    const char* name;
    uint64_t commHash;
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
};
struct GsNcclDescrV3 {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        GsNcclCollV3 coll;
        GsNcclP2pV3 p2p;
    };
};

typedef int GsNcclEventState;

struct GsNcclProfilerV5 {
    const char* name;
    ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
        int nranks, int rank, ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void* context, void** eHandle, GsNcclDescrV5* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, GsNcclEventState eState, void* eStateArgs);
    ncclResult_t (*finalize)(void* context);
};
struct GsNcclProfilerV4 {
    const char* name;
    ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
        int nranks, int rank, ncclDebugLogger_t logfn);
    ncclResult_t (*startEvent)(void* context, void** eHandle, GsNcclDescrV4* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, GsNcclEventState eState, void* eStateArgs);
    ncclResult_t (*finalize)(void* context);
};
struct GsNcclProfilerV3 {
    const char* name;
    ncclResult_t (*init)(void** context, int* eActivationMask);
    ncclResult_t (*startEvent)(void* context, void** eHandle, GsNcclDescrV3* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, GsNcclEventState eState, void* eStateArgs);
    ncclResult_t (*finalize)(void* context);
};

} // extern "C"

static_assert(offsetof(GsNcclDescrV5, coll) == 24, "NCCL v5 descriptor layout");
static_assert(offsetof(GsNcclCollV5, proto) == 72, "NCCL v5 coll layout");
static_assert(offsetof(GsNcclDescrV4, coll) == 24, "NCCL v4 descriptor layout");
static_assert(offsetof(GsNcclCollV3, proto) == 88, "NCCL v3 coll layout");

namespace gapscope::capture::inject {

namespace {

constexpr int kRecordMask = kNcclProfileColl | kNcclProfileP2p;
constexpr size_t kMaxComms = 64;
constexpr size_t kSlots = 1u << 14;

struct Comm {
    uint64_t id = 0;
    int rank = -1;
    int nranks = 0;
};

std::atomic<int*> g_masks[kMaxComms];
Comm g_comms[kMaxComms];
std::atomic<size_t> g_commCount { 0 };

CollectiveRecord g_slots[kSlots];
std::atomic<uint64_t> g_slotCursor { 0 };
// A non-null handle for events we do not record (group events): NCCL may want one to attach
// children to, and stopEvent recognises it.
char g_ignored;

ncclResult_t commInit(void** context, uint64_t commId, int* mask, int nranks, int rank, int version)
{
    Channels& ch = channels();
    ch.ncclPluginVersion.store(version, std::memory_order_relaxed);
    const size_t i = g_commCount.fetch_add(1, std::memory_order_relaxed);
    if (i < kMaxComms) {
        g_comms[i] = Comm { commId, rank, nranks };
        g_masks[i].store(mask, std::memory_order_release);
        *context = &g_comms[i];
    } else {
        *context = nullptr;
    }
    // The largest communicator is the world (TP groups are subsets of it).
    if (nranks > ch.ncclWorldSize.load(std::memory_order_relaxed)) {
        ch.ncclWorldSize.store(nranks, std::memory_order_relaxed);
        ch.ncclRank.store(rank, std::memory_order_relaxed);
    }
    if (mask)
        __atomic_store_n(mask, ch.ncclRecording.load() ? kRecordMask : 0, __ATOMIC_RELAXED);
    injectLog("NCCL profiler plugin v%d: communicator %zu (rank %d of %d)", version, i, rank, nranks);
    return 0;
}

CollectiveRecord* takeSlot()
{
    const uint64_t n = g_slotCursor.fetch_add(1, std::memory_order_relaxed);
    CollectiveRecord* s = &g_slots[n % kSlots];
    *s = CollectiveRecord();
    s->start = nowRealtimeNs();
    s->tid = currentTid();
    return s;
}

template <typename Coll> void fillColl(CollectiveRecord* s, const Coll& c, uint8_t channels)
{
    s->sequence = c.seqNumber;
    s->func = c.func;
    s->count = c.count;
    s->root = c.root;
    s->datatype = c.datatype;
    s->channels = channels;
    s->algorithm = c.algo;
    s->protocol = c.proto;
}

template <typename P2p> void fillP2p(CollectiveRecord* s, const P2p& p)
{
    s->func = p.func;
    s->datatype = p.datatype;
    s->count = p.count;
    s->peer = p.peer;
}

uint64_t commOf(void* context)
{
    return context ? static_cast<Comm*>(context)->id : 0;
}

bool recording()
{
    return channels().ncclRecording.load(std::memory_order_relaxed);
}

ncclResult_t stopEvent(void* handle)
{
    if (!handle || handle == &g_ignored)
        return 0;
    auto* s = static_cast<CollectiveRecord*>(handle);
    s->end = nowRealtimeNs();
    Channels& ch = channels();
    auto* q = ch.collectives.load(std::memory_order_acquire);
    if (!q || !q->tryPush(*s))
        ch.collectivesDropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
}

ncclResult_t recordEventState(void*, GsNcclEventState, void*)
{
    return 0;
}
ncclResult_t finalize(void*)
{
    return 0;
}

ncclResult_t initV5(void** ctx, uint64_t commId, int* mask, const char*, int, int nranks, int rank, ncclDebugLogger_t)
{
    return commInit(ctx, commId, mask, nranks, rank, 5);
}

// v4 and v5 descriptors share the fields read here; the communicator comes from the context.
template <typename Descr> ncclResult_t startWithContext(void* ctx, void** handle, Descr* d)
{
    *handle = &g_ignored;
    if (!d || !recording() || !(d->type & kRecordMask))
        return 0;
    CollectiveRecord* s = takeSlot();
    s->comm = commOf(ctx);
    if (d->type & kNcclProfileColl)
        fillColl(s, d->coll, d->coll.nChannels);
    else
        fillP2p(s, d->p2p);
    *handle = s;
    return 0;
}

ncclResult_t startV5(void* ctx, void** handle, GsNcclDescrV5* d)
{
    return startWithContext(ctx, handle, d);
}

ncclResult_t initV4(void** ctx, int* mask, const char*, uint64_t commHash, int, int nranks, int rank, ncclDebugLogger_t)
{
    return commInit(ctx, commHash, mask, nranks, rank, 4);
}

ncclResult_t startV4(void* ctx, void** handle, GsNcclDescrV4* d)
{
    return startWithContext(ctx, handle, d);
}

ncclResult_t initV3(void** ctx, int* mask)
{
    return commInit(ctx, 0, mask, 0, -1, 3);
}

ncclResult_t startV3(void*, void** handle, GsNcclDescrV3* d)
{
    *handle = &g_ignored;
    if (!d || !recording() || !(d->type & kRecordMask))
        return 0;
    CollectiveRecord* s = takeSlot();
    if (d->type & kNcclProfileColl) {
        fillColl(s, d->coll, d->coll.nMaxChannels);
        s->comm = d->coll.commHash;
    } else {
        fillP2p(s, d->p2p);
        s->comm = d->p2p.commHash;
    }
    *handle = s;
    return 0;
}

} // namespace

void ncclSetRecording(bool on)
{
    channels().ncclRecording.store(on, std::memory_order_release);
    const size_t n = std::min(g_commCount.load(std::memory_order_acquire), kMaxComms);
    for (size_t i = 0; i < n; ++i)
        if (int* mask = g_masks[i].load(std::memory_order_acquire))
            __atomic_store_n(mask, on ? kRecordMask : 0, __ATOMIC_RELAXED);
}

} // namespace gapscope::capture::inject

using namespace gapscope::capture::inject;

extern "C" {
__attribute__((visibility("default"))) GsNcclProfilerV5 ncclProfiler_v5
    = { "gapscope", initV5, startV5, stopEvent, recordEventState, finalize };
__attribute__((visibility("default"))) GsNcclProfilerV4 ncclProfiler_v4
    = { "gapscope", initV4, startV4, stopEvent, recordEventState, finalize };
__attribute__((visibility("default"))) GsNcclProfilerV3 ncclProfiler_v3
    = { "gapscope", initV3, startV3, stopEvent, recordEventState, finalize };
}
