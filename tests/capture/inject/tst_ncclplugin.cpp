// SPDX-License-Identifier: MIT
// The NCCL profiler plugin, called the way NCCL calls it. The descriptors are laid out here
// independently, after NCCL's ext-profiler headers (profiler_v5.h, v4, v3), so a layout mistake in
// the plugin shows up as wrong values.
#include "capture/inject/channels.h"
#include "capture/inject/ncclplugin.h"

#include <QtTest>
#include <cstdint>
#include <cstring>

using namespace gapscope::capture::inject;

namespace {

enum { kGroup = 1, kColl = 2, kP2p = 4, kProxyOp = 8 };

struct DescrV5 {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        struct {
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
        } coll;
        struct {
            const char* func;
            void* buff;
            const char* datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
            void* parentGroup;
        } p2p;
    };
};

struct DescrV4 {
    uint8_t type;
    void* parentObj;
    int rank;
    struct {
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
    } coll;
};

struct DescrV3 {
    uint8_t type;
    void* parentObj;
    int rank;
    struct {
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
    } coll;
};

using Logger = void (*)(int, unsigned long, const char*, int, const char*, ...);

struct V5 {
    const char* name;
    int (*init)(void**, uint64_t, int*, const char*, int, int, int, Logger);
    int (*startEvent)(void*, void**, DescrV5*);
    int (*stopEvent)(void*);
    int (*recordEventState)(void*, int, void*);
    int (*finalize)(void*);
};
struct V4 {
    const char* name;
    int (*init)(void**, int*, const char*, uint64_t, int, int, int, Logger);
    int (*startEvent)(void*, void**, DescrV4*);
    int (*stopEvent)(void*);
    int (*recordEventState)(void*, int, void*);
    int (*finalize)(void*);
};
struct V3 {
    const char* name;
    int (*init)(void**, int*);
    int (*startEvent)(void*, void**, DescrV3*);
    int (*stopEvent)(void*);
    int (*recordEventState)(void*, int, void*);
    int (*finalize)(void*);
};

} // namespace

extern "C" V5 ncclProfiler_v5;
extern "C" V4 ncclProfiler_v4;
extern "C" V3 ncclProfiler_v3;

namespace {

bool popOne(CollectiveRecord& out)
{
    return channels().collectives.load()->tryPop(out);
}

} // namespace

class TstNcclPlugin : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { channels().allocate(4096, 2); }

    void v5MaskFollowsRecordingAndCollectivesArrive()
    {
        int mask = -1;
        void* ctx = nullptr;
        QCOMPARE(QString(ncclProfiler_v5.name), QString("gapscope"));
        QCOMPARE(ncclProfiler_v5.init(&ctx, 0xabcdef, &mask, "tp", 1, 8, 3, nullptr), 0);
        QCOMPARE(mask, 0); // idle: NCCL skips the plugin
        QCOMPARE(channels().ncclPluginVersion.load(), 5);
        QCOMPARE(channels().ncclWorldSize.load(), 8);
        QCOMPARE(channels().ncclRank.load(), 3);
        ncclSetRecording(true);
        QCOMPARE(mask, kColl | kP2p);

        DescrV5 d {};
        d.type = kColl;
        d.rank = 3;
        d.coll.seqNumber = 41;
        d.coll.func = "AllReduce";
        d.coll.count = 4096;
        d.coll.root = 0;
        d.coll.datatype = "ncclBfloat16";
        d.coll.nChannels = 16;
        d.coll.algo = "Ring";
        d.coll.proto = "LL128";
        void* handle = nullptr;
        QCOMPARE(ncclProfiler_v5.startEvent(ctx, &handle, &d), 0);
        QVERIFY(handle);
        QCOMPARE(ncclProfiler_v5.recordEventState(handle, 22, nullptr), 0);
        QCOMPARE(ncclProfiler_v5.stopEvent(handle), 0);
        CollectiveRecord r;
        QVERIFY(popOne(r));
        QCOMPARE(r.sequence, uint64_t(41));
        QCOMPARE(QString(r.func), QString("AllReduce"));
        QCOMPARE(r.count, uint64_t(4096));
        QCOMPARE(QString(r.datatype), QString("ncclBfloat16"));
        QCOMPARE(QString(r.algorithm), QString("Ring"));
        QCOMPARE(QString(r.protocol), QString("LL128"));
        QCOMPARE(r.channels, 16u);
        QCOMPARE(r.comm, uint64_t(0xabcdef));
        QVERIFY(r.end >= r.start && r.start > 0);

        // Point-to-point.
        DescrV5 p {};
        p.type = kP2p;
        p.p2p.func = "Send";
        p.p2p.count = 128;
        p.p2p.datatype = "ncclFloat32";
        p.p2p.peer = 1;
        QCOMPARE(ncclProfiler_v5.startEvent(ctx, &handle, &p), 0);
        QCOMPARE(ncclProfiler_v5.stopEvent(handle), 0);
        QVERIFY(popOne(r));
        QCOMPARE(QString(r.func), QString("Send"));
        QCOMPARE(r.peer, 1);

        // Group and proxy events get a handle NCCL can use but record nothing.
        DescrV5 g {};
        g.type = kGroup;
        QCOMPARE(ncclProfiler_v5.startEvent(ctx, &handle, &g), 0);
        QVERIFY(handle);
        QCOMPARE(ncclProfiler_v5.stopEvent(handle), 0);
        g.type = kProxyOp;
        QCOMPARE(ncclProfiler_v5.startEvent(ctx, &handle, &g), 0);
        QCOMPARE(ncclProfiler_v5.stopEvent(handle), 0);
        QVERIFY(!popOne(r));

        ncclSetRecording(false);
        QCOMPARE(mask, 0);
        QCOMPARE(ncclProfiler_v5.startEvent(ctx, &handle, &d), 0);
        QCOMPARE(ncclProfiler_v5.stopEvent(handle), 0);
        QVERIFY(!popOne(r)); // not recording: nothing queued
        QCOMPARE(ncclProfiler_v5.finalize(ctx), 0);
    }

    void v4Layout()
    {
        int mask = -1;
        void* ctx = nullptr;
        QCOMPARE(ncclProfiler_v4.init(&ctx, &mask, "world", 77, 1, 2, 1, nullptr), 0);
        ncclSetRecording(true);
        DescrV4 d {};
        d.type = kColl;
        d.coll.seqNumber = 9;
        d.coll.func = "AllGather";
        d.coll.count = 10;
        d.coll.datatype = "ncclFloat16";
        d.coll.nChannels = 4;
        d.coll.algo = "Tree";
        d.coll.proto = "Simple";
        void* handle = nullptr;
        QCOMPARE(ncclProfiler_v4.startEvent(ctx, &handle, &d), 0);
        QCOMPARE(ncclProfiler_v4.stopEvent(handle), 0);
        CollectiveRecord r;
        QVERIFY(popOne(r));
        QCOMPARE(QString(r.func), QString("AllGather"));
        QCOMPARE(r.sequence, uint64_t(9));
        QCOMPARE(QString(r.protocol), QString("Simple"));
        QCOMPARE(r.comm, uint64_t(77));
        ncclSetRecording(false);
    }

    void v3Layout()
    {
        int mask = -1;
        void* ctx = nullptr;
        QCOMPARE(ncclProfiler_v3.init(&ctx, &mask), 0);
        ncclSetRecording(true);
        QCOMPARE(mask, kColl | kP2p);
        DescrV3 d {};
        d.type = kColl;
        d.coll.name = "c";
        d.coll.commHash = 55;
        d.coll.seqNumber = 3;
        d.coll.func = "ReduceScatter";
        d.coll.count = 8;
        d.coll.datatype = "ncclInt32";
        d.coll.nMaxChannels = 2;
        d.coll.algo = "Ring";
        d.coll.proto = "LL";
        void* handle = nullptr;
        QCOMPARE(ncclProfiler_v3.startEvent(ctx, &handle, &d), 0);
        QCOMPARE(ncclProfiler_v3.stopEvent(handle), 0);
        CollectiveRecord r;
        QVERIFY(popOne(r));
        QCOMPARE(QString(r.func), QString("ReduceScatter"));
        QCOMPARE(r.comm, uint64_t(55));
        QCOMPARE(r.channels, 2u);
        QCOMPARE(QString(r.protocol), QString("LL"));
        ncclSetRecording(false);
        QCOMPARE(mask, 0);
    }
};

QTEST_APPLESS_MAIN(TstNcclPlugin)
#include "tst_ncclplugin.moc"
