// SPDX-License-Identifier: MIT
#include "model/import/perfettoreader.h"

#include "model/format/perfettodecoder.h"
#include "model/format/zstdcodec.h"
#include "model/import/perfettotracks.h"

#include <cstring>
#include <unordered_map>
#ifdef GAPSCOPE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace gapscope::model::importer {

using format::PerfettoDecoder;
using format::PerfettoPacket;

namespace {

// A varint at p[0, n); 0 bytes taken when it is cut or longer than 10 bytes.
size_t varint(const uint8_t* p, size_t n, uint64_t& v)
{
    v = 0;
    for (size_t i = 0; i < n && i < 10; ++i) {
        v |= uint64_t(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80))
            return i + 1;
    }
    return 0;
}

// True when p[0, n) is a run of well-formed protobuf fields (the last may be cut by the end of `n`
// when `partial`).
bool wellFormedFields(const uint8_t* p, size_t n, bool partial)
{
    size_t i = 0;
    int fields = 0;
    while (i < n) {
        uint64_t tag = 0, v = 0;
        const size_t t = varint(p + i, n - i, tag);
        if (!t)
            return partial && fields > 0;
        const uint32_t wire = uint32_t(tag & 7);
        if ((tag >> 3) == 0 || (wire != 0 && wire != 1 && wire != 2 && wire != 5))
            return false;
        i += t;
        if (wire == 0) {
            const size_t k = varint(p + i, n - i, v);
            if (!k)
                return partial;
            i += k;
        } else if (wire == 2) {
            const size_t k = varint(p + i, n - i, v);
            if (!k)
                return partial;
            i += k;
            if (v > n - i)
                return partial;
            i += size_t(v);
        } else {
            i += wire == 1 ? 8 : 4;
        }
        ++fields;
    }
    return i == n || partial;
}

struct SequenceClock {
    bool incremental = false;
    uint64_t unit = 1;
    uint64_t base = 0; // the clock's value at the snapshot
    uint32_t reference = 0; // a builtin clock
    uint64_t referenceBase = 0; // its value at the snapshot
    uint64_t last = 0;
};

struct Sequence {
    bool valid = false; // its incremental state was cleared at least once
    std::unordered_map<uint64_t, uint32_t> names; // iid -> StringPool id
    std::unordered_map<uint64_t, std::string> categories, argNames, argStrings;
    uint32_t defaultClock = 0;
    bool hasDefaultTrack = false;
    uint64_t defaultTrack = 0;
    std::unordered_map<uint32_t, SequenceClock> clocks;
    void clear()
    {
        *this = Sequence {};
        valid = true;
    }
};

struct Open {
    int64_t start;
    uint32_t name;
    int8_t kind;
    uint32_t args;
};

// The kind a gapscope category names (toString(EventKind)), or -1.
int8_t kindOfCategory(std::string_view c)
{
    for (int k = 0; k <= int(EventKind::Host); ++k)
        if (c == toString(EventKind(k)))
            return int8_t(k);
    return -1;
}

} // namespace

struct PerfettoReader::State {
    PerfettoDecoder decoder;
    PerfettoPacket packet;
    format::ZstdDecompressor zstd;
    PerfettoTracks tracks;
    std::unordered_map<uint32_t, Sequence> sequences;
    std::vector<std::vector<Open>> open; // per track
    std::vector<PerfettoSlice> slices;
    std::vector<PerfettoSliceArgs> args;
    uint32_t primary = PerfettoDecoder::kClockBoottime;
    std::unordered_map<uint32_t, int64_t> offsets; // builtin clock -> primary - clock
    uint64_t packets = 0, badPackets = 0, needsState = 0, badTimes = 0, counters = 0, unmatchedEnds = 0,
             otherEvents = 0, missingNames = 0;

    Status packetsIn(const char* data, size_t size, uint64_t base, const std::string& where, StagedTrace& out,
        size_t maxBytes, int depth, size_t& consumed);
    void onPacket(const char* data, size_t size, uint64_t offset, const std::string& where, StagedTrace& out,
        size_t maxBytes, int depth);
    void bad(StagedTrace& out, uint64_t offset, const std::string& where, const std::string& what);
    void clockSnapshot(const PerfettoPacket& p, Sequence& seq);
    bool traceTime(const PerfettoPacket& p, Sequence& seq, int64_t& t);
    void event(const PerfettoPacket& p, Sequence& seq, StagedTrace& out);
    uint32_t sliceArgs(const PerfettoPacket::Event& e, Sequence& seq);
};

void PerfettoReader::State::bad(StagedTrace& out, uint64_t offset, const std::string& where, const std::string& what)
{
    if (++badPackets <= 10)
        out.warnings.push_back(out.path() + ": " + where + "byte " + std::to_string(offset) + ": " + what
            + "; the packet is skipped, the others kept");
}

// Frames the packets of data[0, size) (a Trace); `consumed` is where the last whole packet ends.
Status PerfettoReader::State::packetsIn(const char* data, size_t size, uint64_t base, const std::string& where,
    StagedTrace& out, size_t maxBytes, int depth, size_t& consumed)
{
    const auto* p = reinterpret_cast<const uint8_t*>(data);
    size_t at = 0;
    consumed = 0;
    while (at < size) {
        uint64_t len = 0;
        const size_t k = size - at > 1 ? varint(p + at + 1, size - at - 1, len) : 0;
        if (p[at] != 0x0a)
            return Status::error(where + "byte " + std::to_string(base + at) + ": not a Trace.packet record (tag 0x" +
                [](uint8_t b) {
                    const char* hex = "0123456789abcdef";
                    return std::string { hex[b >> 4], hex[b & 15] };
                }(p[at])
                + ")");
        if (!k || len > size - at - 1 - k) {
            if (len > maxBytes)
                return Status::error(where + "byte " + std::to_string(base + at) + ": a packet of "
                    + std::to_string(len) + " bytes, larger than the " + std::to_string(maxBytes) + " allowed");
            return Status::ok(); // the rest of the packet is not here (yet)
        }
        const size_t body = at + 1 + k;
        onPacket(data + body, size_t(len), base + at, where, out, maxBytes, depth);
        at = body + size_t(len);
        consumed = at;
    }
    return Status::ok();
}

void PerfettoReader::State::onPacket(const char* data, size_t size, uint64_t offset, const std::string& where,
    StagedTrace& out, size_t maxBytes, int depth)
{
    ++packets;
    if (!decoder.decode(data, size, packet)) {
        bad(out, offset, where, "a packet of " + std::to_string(size) + " bytes that is no TracePacket");
        return;
    }
    if (packet.data == PerfettoPacket::Data::Deflate || packet.data == PerfettoPacket::Data::Zstd) {
        std::string raw;
        Status s = Status::ok();
        if (packet.data == PerfettoPacket::Data::Zstd)
            s = zstd.decompressAll(packet.payload.data(), packet.payload.size(), maxBytes, raw);
        else {
#ifdef GAPSCOPE_HAVE_ZLIB
            z_stream z {};
            inflateInit(&z);
            z.next_in = reinterpret_cast<Bytef*>(packet.payload.data());
            z.avail_in = uInt(packet.payload.size());
            int r = Z_OK;
            while (r == Z_OK) {
                if (raw.size() >= maxBytes) {
                    r = Z_MEM_ERROR;
                    break;
                }
                const size_t have = raw.size();
                raw.resize(std::min(maxBytes, std::max<size_t>(have * 2, 64 << 10)));
                z.next_out = reinterpret_cast<Bytef*>(raw.data() + have);
                z.avail_out = uInt(raw.size() - have);
                r = inflate(&z, Z_NO_FLUSH);
                raw.resize(raw.size() - z.avail_out);
                if (r == Z_BUF_ERROR && z.avail_in)
                    r = Z_OK;
            }
            inflateEnd(&z);
            if (r != Z_STREAM_END)
                s = Status::error(
                    std::string("deflate data damaged or cut short") + (z.msg ? ": " + std::string(z.msg) : ""));
#else
            s = Status::error("compressed_packets need zlib, which this build lacks");
#endif
        }
        if (!s) {
            bad(out, offset, where, "compressed packets that do not decompress: " + s.message());
            return;
        }
        if (depth > 0) {
            bad(out, offset, where, "compressed packets inside compressed packets");
            return;
        }
        size_t consumed = 0;
        const std::string inner = where + "compressed packet at byte " + std::to_string(offset) + ", ";
        if (Status f = packetsIn(raw.data(), raw.size(), 0, inner, out, maxBytes, depth + 1, consumed); !f)
            bad(out, offset, "", f.message());
        else if (consumed != raw.size())
            bad(out, offset, inner, "a packet cut short at byte " + std::to_string(consumed));
        return;
    }
    Sequence& seq = sequences[packet.sequence];
    if (packet.flags & PerfettoDecoder::kStateCleared)
        seq.clear();
    if ((packet.flags & PerfettoDecoder::kNeedsState) && !seq.valid) {
        ++needsState;
        return;
    }
    if (packet.hasDefaults) {
        seq.defaultClock = packet.defaultClock;
        seq.hasDefaultTrack = packet.hasDefaultTrack;
        seq.defaultTrack = packet.defaultTrack;
    }
    for (auto& n : packet.eventNames)
        seq.names[n.iid] = out.strings().intern(n.text);
    for (auto& n : packet.categories)
        seq.categories[n.iid] = std::move(n.text);
    for (auto& n : packet.argNames)
        seq.argNames[n.iid] = std::move(n.text);
    for (auto& n : packet.argStrings)
        seq.argStrings[n.iid] = std::move(n.text);
    switch (packet.data) {
    case PerfettoPacket::Data::ClockSnapshot:
        clockSnapshot(packet, seq);
        break;
    case PerfettoPacket::Data::TrackDescriptor: {
        const PerfettoPacket::Track& d = packet.track;
        PerfettoTrack t;
        t.uuid = d.uuid;
        t.parent = d.parent;
        t.name = d.name.empty() ? (d.isProcess ? d.processName : d.threadName) : d.name;
        t.isProcess = d.isProcess;
        t.isThread = d.isThread;
        t.isCounter = d.isCounter;
        t.pid = d.pid;
        t.tid = d.tid;
        t.processName = d.processName;
        tracks.describe(t);
        break;
    }
    case PerfettoPacket::Data::TrackEvent:
        event(packet, seq, out);
        break;
    default:
        break;
    }
}

void PerfettoReader::State::clockSnapshot(const PerfettoPacket& p, Sequence& seq)
{
    if (p.primaryClock)
        primary = p.primaryClock;
    const PerfettoPacket::Clock* prim = nullptr;
    const PerfettoPacket::Clock* builtin = nullptr;
    for (const auto& c : p.clocks) {
        if (c.id == primary)
            prim = &c;
        if (c.id < PerfettoDecoder::kFirstSequenceClock && !builtin)
            builtin = &c;
    }
    if (prim)
        for (const auto& c : p.clocks)
            if (c.id < PerfettoDecoder::kFirstSequenceClock && c.id != primary)
                offsets[c.id] = int64_t(prim->timestamp - c.timestamp);
    const PerfettoPacket::Clock* ref = prim ? prim : builtin;
    if (!ref)
        return;
    for (const auto& c : p.clocks)
        if (c.id >= PerfettoDecoder::kFirstSequenceClock && c.id < 128)
            seq.clocks[c.id]
                = { c.incremental, c.unitNs ? c.unitNs : 1, c.timestamp, ref->id, ref->timestamp, c.timestamp };
}

bool PerfettoReader::State::traceTime(const PerfettoPacket& p, Sequence& seq, int64_t& t)
{
    uint32_t clock = p.clockId ? p.clockId : seq.defaultClock;
    uint64_t v = p.timestamp;
    if (clock >= PerfettoDecoder::kFirstSequenceClock) {
        auto it = seq.clocks.find(clock);
        if (it == seq.clocks.end())
            return false;
        SequenceClock& c = it->second;
        if (c.incremental) {
            c.last += v;
            v = c.last;
        }
        v = c.referenceBase + (v - c.base) * c.unit;
        clock = c.reference;
    }
    int64_t offset = 0;
    if (clock && clock != primary) {
        auto it = offsets.find(clock);
        if (it == offsets.end())
            return false;
        offset = it->second;
    }
    t = clampTime(int64_t(v) + offset);
    return true;
}

uint32_t PerfettoReader::State::sliceArgs(const PerfettoPacket::Event& e, Sequence& seq)
{
    if (e.args.empty())
        return UINT32_MAX;
    PerfettoSliceArgs a;
    bool any = false;
    for (const PerfettoPacket::Arg& arg : e.args) {
        using Type = PerfettoPacket::Arg::Type;
        auto name = arg.nameIid ? seq.argNames.find(arg.nameIid) : seq.argNames.end();
        const std::string& key = arg.nameIid ? (name == seq.argNames.end() ? std::string() : name->second) : arg.name;
        const uint64_t u = arg.type == Type::Int ? uint64_t(arg.intValue) : arg.uintValue;
        std::string text = arg.stringValue;
        if (arg.type == Type::StringIid) {
            auto s = seq.argStrings.find(arg.uintValue);
            text = s == seq.argStrings.end() ? std::string() : s->second;
        }
        auto dims = [&](uint32_t(&d)[3]) {
            unsigned x = 0, y = 0, z = 0;
            if (std::sscanf(text.c_str(), "[%u,%u,%u]", &x, &y, &z) == 3) {
                d[0] = x;
                d[1] = y;
                d[2] = z;
            }
        };
        any = true;
        if (key == "correlation")
            a.correlation = u;
        else if (key == "grid")
            dims(a.config.grid);
        else if (key == "block")
            dims(a.config.block);
        else if (key == "registers")
            a.config.registers = uint32_t(u);
        else if (key == "shared_memory")
            a.config.sharedDynamic = uint32_t(u);
        else if (key == "graph_id")
            a.config.graphId = uint32_t(u);
        else if (key == "graph_node_id")
            a.config.graphNodeId = u;
        else if (key == "bytes")
            a.bytes = u;
        else if (key == "copy_kind")
            a.copyKind = text;
        else if (key == "step")
            a.step = int64_t(u);
        else
            any = false;
    }
    if (!any)
        return UINT32_MAX;
    args.push_back(std::move(a));
    return uint32_t(args.size() - 1);
}

void PerfettoReader::State::event(const PerfettoPacket& p, Sequence& seq, StagedTrace& out)
{
    const PerfettoPacket::Event& e = p.event;
    int64_t t = 0;
    if (!traceTime(p, seq, t)) {
        ++badTimes;
        return;
    }
    const uint64_t uuid = e.hasTrack ? e.track
        : seq.hasDefaultTrack        ? seq.defaultTrack
                                     : (uint64_t(1) << 63) | p.sequence;
    const uint32_t track = tracks.track(uuid);
    if (open.size() <= track)
        open.resize(track + 1);
    switch (e.type) {
    case 1: // TYPE_SLICE_BEGIN
    case 3: { // TYPE_INSTANT
        uint32_t name = 0;
        if (e.nameIid) {
            auto it = seq.names.find(e.nameIid);
            if (it == seq.names.end())
                ++missingNames;
            name = it == seq.names.end() ? out.strings().intern("<name iid " + std::to_string(e.nameIid) + ">")
                                         : it->second;
        } else {
            name = out.strings().intern(e.name.empty() ? std::string_view("(unnamed)") : std::string_view(e.name));
        }
        int8_t kind = -1;
        for (const std::string& c : e.categories)
            kind = kind >= 0 ? kind : kindOfCategory(c);
        for (uint64_t iid : e.categoryIids)
            if (auto it = seq.categories.find(iid); kind < 0 && it != seq.categories.end())
                kind = kindOfCategory(it->second);
        const Open o { t, name, kind, sliceArgs(e, seq) };
        if (e.type == 3)
            slices.push_back({ t, 0, track, o.name, o.kind, o.args });
        else
            open[track].push_back(o);
        break;
    }
    case 2: { // TYPE_SLICE_END
        if (open[track].empty()) {
            ++unmatchedEnds;
            break;
        }
        const Open o = open[track].back();
        open[track].pop_back();
        slices.push_back({ o.start, std::max<int64_t>(0, t - o.start), track, o.name, o.kind, o.args });
        break;
    }
    case 4: // TYPE_COUNTER
        ++counters;
        break;
    default:
        ++otherEvents;
        break;
    }
}

PerfettoReader::PerfettoReader(ByteSource& source, StagedTrace& out, Options options)
    : m_state(std::make_unique<State>())
    , m_source(source)
    , m_out(out)
    , m_options(std::move(options))
{
}

PerfettoReader::PerfettoReader(ByteSource& source, StagedTrace& out)
    : PerfettoReader(source, out, Options {})
{
}

PerfettoReader::~PerfettoReader() = default;

bool PerfettoReader::looksLikePerfetto(const char* head, size_t n)
{
    const auto* p = reinterpret_cast<const uint8_t*>(head);
    uint64_t len = 0;
    const size_t k = n > 1 && p[0] == 0x0a ? varint(p + 1, n - 1, len) : 0;
    if (!k || len == 0 || len > (256u << 20))
        return false;
    const size_t avail = n - 1 - k;
    if (len <= avail) {
        PerfettoDecoder d;
        PerfettoPacket packet;
        return wellFormedFields(p + 1 + k, size_t(len), false) && d.decode(head + 1 + k, size_t(len), packet);
    }
    return avail >= 2 && wellFormedFields(p + 1 + k, avail, true);
}

Status PerfettoReader::read()
{
    State& s = *m_state;
    std::string window;
    size_t have = 0;
    uint64_t base = 0; // file offset of window[0]
    bool truncated = false;
    for (;;) {
        if (window.size() < std::max(m_options.windowBytes, have * 2))
            window.resize(std::max(m_options.windowBytes, have * 2));
        auto n = m_source.read(window.data() + have, window.size() - have);
        if (!n)
            return n.status().withContext(m_out.path());
        have += *n;
        size_t consumed = 0;
        Status st = s.packetsIn(window.data(), have, base, "", m_out, m_options.maxPacketBytes, 0, consumed);
        if (!st) {
            if (s.packets == 0)
                return st.withContext(m_out.path());
            m_out.warnings.push_back(m_out.path() + ": " + st.message() + "; the rest of the file is not read");
            m_out.count(
                format::Stat::ImportBadEvents, "damaged Perfetto packet framing (the rest of the file not read)");
            break;
        }
        std::memmove(window.data(), window.data() + consumed, have - consumed);
        have -= consumed;
        base += consumed;
        if (m_options.progress && !m_options.progress(m_source.fileBytesRead()))
            return Status::error("import cancelled");
        if (*n == 0) {
            truncated = have > 0 || m_source.truncated();
            break;
        }
        if (m_out.overBudget())
            break;
    }
    if (truncated) {
        m_out.warnings.push_back(m_out.path() + ": the trace ends inside the packet at byte " + std::to_string(base)
            + " (file cut short): " + std::to_string(s.packets) + " packets before it kept");
        m_out.count(format::Stat::ImportTruncated);
    }
    return finish();
}

Status PerfettoReader::finish()
{
    State& s = *m_state;
    StagedTrace& out = m_out;
    uint64_t unterminated = 0;
    for (const auto& stack : s.open)
        unterminated += stack.size();
    auto countIf = [&](uint64_t n, format::Stat stat, const char* what) {
        if (n)
            out.count(stat, what, n);
    };
    countIf(unterminated, format::Stat::ImportUnterminatedRanges, "slices begun and never ended (dropped)");
    countIf(s.badPackets, format::Stat::ImportBadEvents, "Perfetto packets that do not parse or decompress (skipped)");
    countIf(s.needsState, format::Stat::ImportBadEvents,
        "Perfetto packets that need incremental state their sequence never cleared (skipped)");
    countIf(s.badTimes, format::Stat::ImportBadEvents, "track events on a clock no snapshot defines (skipped)");
    countIf(s.unmatchedEnds, format::Stat::ImportBadEvents, "slice ends without a begin on their track");
    countIf(s.counters, format::Stat::ImportSkippedEvents, "counter values (gapscope has no counter tracks)");
    countIf(s.otherEvents, format::Stat::ImportSkippedEvents, "track events of other types");
    countIf(s.missingNames, format::Stat::ImportMissingStrings, "event name iids never interned");
    if (s.badPackets > 10)
        out.warnings.push_back(out.path() + ": " + std::to_string(s.badPackets - 10) + " more damaged packets skipped");
    const uint64_t gpu = s.tracks.stage(s.slices, s.args, out);
    if (gpu == 0)
        return Status::error(out.path() + ": Perfetto trace: " + std::to_string(s.packets)
            + " packets, no GPU tracks/slices: nothing to import");
    bool ranked = true;
    for (const StagedProcess& p : out.processes())
        ranked = ranked && p.rank.has_value();
    if (!ranked)
        out.orderProcessesByDevice();
    out.absoluteClock = s.primary == PerfettoDecoder::kClockRealtime;
    out.metadata["tool"] = "Perfetto trace";
    out.metadata["import.perfetto_packets"] = std::to_string(s.packets);
    return Status::ok();
}

} // namespace gapscope::model::importer
