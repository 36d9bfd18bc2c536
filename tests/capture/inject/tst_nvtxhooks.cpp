// SPDX-License-Identifier: MIT
// The NVTX injection side: NVTX's export table is faked the way nvtxInit.h calls a tool
// (fakenvtxtable.h), then the installed handlers are called like an application would.
#include "capture/inject/channels.h"
#include "capture/inject/nvtxhooks.h"
#include "tests/capture/inject/fakenvtxtable.h"

#include <nvtx3/nvToolsExt.h>

#include <QtTest>
#include <cstring>
#include <string>
#include <vector>

using namespace gapscope::capture::inject;

namespace {

NvtxFunctionPointer* const g_core = fakenvtx::core();
NvtxFunctionPointer* const g_core2 = fakenvtx::core2();

template <typename F> F slot(NvtxFunctionPointer* table, int id)
{
    return reinterpret_cast<F>(table[id]);
}

std::vector<NvtxRecord> drain()
{
    std::vector<NvtxRecord> out;
    NvtxRecord r;
    while (channels().nvtx.load()->tryPop(r))
        out.push_back(r);
    return out;
}

} // namespace

class TstNvtxHooks : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCOMPARE(fakenvtx::install(), 1);
        QVERIFY(nvtxHooksInstalled());
        QVERIFY(g_core[NVTX_CBID_CORE_RangePushA]);
        QVERIFY(g_core[NVTX_CBID_CORE_RangePop]);
        QVERIFY(g_core2[NVTX_CBID_CORE2_DomainRangePushEx]);
        channels().allocate(4096, 2);
    }

    void offRecordsNothing()
    {
        channels().nvtxMode.store(0);
        QCOMPARE(slot<nvtxRangePushA_impl_fntype>(g_core, NVTX_CBID_CORE_RangePushA)("quiet"), 0);
        QCOMPARE(slot<nvtxRangePop_impl_fntype>(g_core, NVTX_CBID_CORE_RangePop)(), 0);
        QVERIFY(drain().empty());
    }

    void detectionQueuesOnlyOpenings()
    {
        channels().nvtxMode.store(1);
        slot<nvtxRangePushA_impl_fntype>(g_core, NVTX_CBID_CORE_RangePushA)("decode step 7");
        slot<nvtxRangePop_impl_fntype>(g_core, NVTX_CBID_CORE_RangePop)();
        slot<nvtxMarkA_impl_fntype>(g_core, NVTX_CBID_CORE_MarkA)("mark");
        const auto got = drain();
        QCOMPARE(got.size(), size_t(1));
        QCOMPARE(int(got[0].op), int(NvtxOp::Push));
        QCOMPARE(std::string(got[0].name), std::string("decode step 7"));
        QCOMPARE(got[0].tid, currentTid());
        QVERIFY(got[0].time > 0);
        channels().nvtxMode.store(0);
    }

    void recordingQueuesEverything()
    {
        channels().nvtxMode.store(2);
        auto push = slot<nvtxRangePushA_impl_fntype>(g_core, NVTX_CBID_CORE_RangePushA);
        auto pop = slot<nvtxRangePop_impl_fntype>(g_core, NVTX_CBID_CORE_RangePop);
        QCOMPARE(push("outer"), 0);
        QCOMPARE(push("a name much longer than the forty bytes a record keeps"), 1);
        QCOMPARE(pop(), 1);
        QCOMPARE(pop(), 0);
        nvtxEventAttributes_t attr {};
        attr.version = NVTX_VERSION;
        attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attr.message.ascii = "started";
        const nvtxRangeId_t id = slot<nvtxRangeStartEx_impl_fntype>(g_core, NVTX_CBID_CORE_RangeStartEx)(&attr);
        slot<nvtxRangeEnd_impl_fntype>(g_core, NVTX_CBID_CORE_RangeEnd)(id);
        // Registered strings in a domain.
        auto domain = slot<nvtxDomainCreateA_impl_fntype>(g_core2, NVTX_CBID_CORE2_DomainCreateA)("sglang");
        auto reg = slot<nvtxDomainRegisterStringA_impl_fntype>(g_core2, NVTX_CBID_CORE2_DomainRegisterStringA)(
            domain, "scheduler");
        attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        attr.message.registered = reg;
        slot<nvtxDomainRangePushEx_impl_fntype>(g_core2, NVTX_CBID_CORE2_DomainRangePushEx)(domain, &attr);
        slot<nvtxDomainRangePop_impl_fntype>(g_core2, NVTX_CBID_CORE2_DomainRangePop)(domain);
        const auto got = drain();
        QCOMPARE(got.size(), size_t(8));
        QCOMPARE(std::string(got[0].name), std::string("outer"));
        QCOMPARE(int(got[1].depth), 1);
        QCOMPARE(int(got[1].truncated), 1);
        QCOMPARE(std::strlen(got[1].name), sizeof(got[1].name) - 1);
        QCOMPARE(int(got[2].op), int(NvtxOp::Pop));
        QCOMPARE(int(got[4].op), int(NvtxOp::Start));
        QCOMPARE(got[4].rangeId, uint64_t(id));
        QCOMPARE(int(got[5].op), int(NvtxOp::End));
        QCOMPARE(got[5].rangeId, uint64_t(id));
        QCOMPARE(std::string(got[6].name), std::string("scheduler"));
        QVERIFY(got[6].domain != 0);
        channels().nvtxMode.store(0);
    }

    void fullQueueCountsLosses()
    {
        channels().nvtxMode.store(2);
        const uint64_t before = channels().nvtxDropped.load();
        auto mark = slot<nvtxMarkA_impl_fntype>(g_core, NVTX_CBID_CORE_MarkA);
        const size_t cap = channels().nvtx.load()->capacity();
        for (size_t i = 0; i < cap + 10; ++i)
            mark("m");
        QCOMPARE(channels().nvtxDropped.load() - before, uint64_t(10));
        QCOMPARE(drain().size(), cap);
        channels().nvtxMode.store(0);
    }
};

QTEST_APPLESS_MAIN(TstNvtxHooks)
#include "tst_nvtxhooks.moc"
