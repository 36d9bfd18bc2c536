// SPDX-License-Identifier: MIT
#include "model/import/kinetoreader.h"

#include "model/import/jsoncursor.h"
#include "model/import/jsonscanner.h"
#include "model/import/kinetoevents.h"
#include "model/import/kinetometadata.h"
#include "model/import/kinetopipeline.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace gapscope::model::importer {

namespace {
constexpr size_t kMetadataLimit = 64u << 20; // top-level members kept whole; larger ones are skipped
constexpr int kMaxCutRetries = 64;

inline bool isSpace(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

bool wantedMember(const std::string& key)
{
    return key == "deviceProperties" || key == "distributedInfo" || key == "baseTimeNanoseconds"
        || key == "cuda_driver_version" || key == "cuda_runtime_version" || key == "cupti_version"
        || key == "schemaVersion" || key == "trace_id" || key == "displayTimeUnit" || key == "traceName";
}
} // namespace

struct KinetoReader::Impl {
    explicit Impl(StagedTrace& out)
        : events(out)
        , meta(out, events.process())
    {
    }
    KinetoEventParser events;
    KinetoMetadata meta;
    simdjson::ondemand::parser parser;
    std::unique_ptr<KinetoPipeline> pipeline; // null: sequential
};

KinetoReader::KinetoReader(ByteSource& source, StagedTrace& out, Options options)
    : m_source(source)
    , m_out(out)
    , m_options(std::move(options))
    , m_window(source, m_options.windowBytes)
    , m_cursor(source, m_window)
    , m_impl(std::make_unique<Impl>(out))
{
    if (m_options.workers > 0)
        m_impl->pipeline = std::make_unique<KinetoPipeline>(m_options.workers);
}

KinetoReader::~KinetoReader() = default;

void KinetoReader::truncated(const std::string& what)
{
    m_truncated = true;
    const std::string w = m_cursor.where(m_window.offset()) + ": " + what + "; kept the " + std::to_string(m_elements)
        + " trace events read before it";
    m_out.warnings.push_back(w);
    m_out.count(format::Stat::ImportTruncated, w);
}

Status KinetoReader::read()
{
    auto c = m_cursor.peek();
    if (!c)
        return c.status();
    if (*c == 0)
        return Status::error(m_source.path() + ": empty file");
    Status st;
    if (*c == '[') {
        m_window.consume(1);
        st = eventArray(true);
    } else if (*c == '{') {
        m_window.consume(1);
        st = topObject();
    } else {
        return m_cursor.malformed(m_window.offset(), "expected '{' or '[' at the start of a trace");
    }
    if (!st)
        return st;
    if (!m_truncated) {
        auto rest = m_cursor.peek();
        if (!rest)
            return rest.status();
        if (*rest != 0) {
            const std::string w
                = m_cursor.where(m_window.offset()) + ": data after the end of the JSON document, ignored";
            m_out.warnings.push_back(w);
            m_out.count(format::Stat::ImportTrailingData, w);
        }
    }
    if (m_source.truncated() && !m_truncated)
        truncated("the gzip stream ends early");
    if (*c == '{' && !m_sawEvents && !m_truncated)
        return notKineto();
    m_impl->events.finish();
    m_out.metadata["import.trace_events"] = std::to_string(m_elements);
    if (m_units)
        m_out.metadata["import.parallel_units"] = std::to_string(m_units);
    // Host ranges alone (operators without GPU work) are nothing to analyse either.
    if (m_options.failWhenEmpty && m_out.eventCount() == m_out.eventCount(StagedKind::Host))
        return nothingImported();
    return Status::ok();
}

Status KinetoReader::notKineto() const
{
    if (m_sawNodes)
        return Status::error(m_source.path()
            + ": a PyTorch execution trace (top-level \"nodes\"), not a Kineto / Chrome trace: it holds no "
              "timed GPU events; open the trace torch.profiler wrote (the one with \"traceEvents\")");
    return Status::error(
        m_source.path() + ": not a Kineto / Chrome trace: the top-level object has no \"traceEvents\" array");
}

// What the trace events were, when none became an event: the largest skipped and unknown kinds.
Status KinetoReader::nothingImported() const
{
    std::vector<std::pair<uint64_t, std::string>> kinds;
    for (const auto& [cat, n] : m_impl->events.hostEvents())
        kinds.emplace_back(n, cat);
    for (const auto& [key, c] : m_out.counters()) {
        if (c.name == "import_skipped_events")
            kinds.emplace_back(c.value, c.detail);
        else if (c.name == "import_unknown_event_kinds")
            kinds.emplace_back(c.value, c.detail + " (unknown)");
        else if (c.name == "import_bad_events")
            kinds.emplace_back(c.value, c.detail + " (unreadable)");
    }
    std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string what;
    for (size_t i = 0; i < kinds.size() && i < 4; ++i)
        what += (i ? ", " : ": ") + std::to_string(kinds[i].first) + " " + kinds[i].second;
    if (kinds.size() > 4)
        what += ", ...";
    return Status::error(m_source.path()
        + ": nothing to import: no GPU kernels, memory copies, API calls or annotations among its "
        + std::to_string(m_elements) + " trace events" + what + (m_truncated ? " (the file is cut short)" : ""));
}

Status KinetoReader::expect(char c, const char* context)
{
    auto got = m_cursor.peek();
    if (!got)
        return got.status();
    if (*got != c) {
        if (*got == 0) {
            truncated(std::string("the file ends ") + context);
            return Status::ok();
        }
        return m_cursor.malformed(m_window.offset(), std::string("expected '") + c + "' " + context);
    }
    m_window.consume(1);
    return Status::ok();
}

Status KinetoReader::topObject()
{
    for (bool first = true;; first = false) {
        auto c = m_cursor.peek();
        if (!c)
            return c.status();
        if (*c == '}') {
            m_window.consume(1);
            return Status::ok();
        }
        if (*c == 0) {
            truncated("the file ends inside the top-level object");
            return Status::ok();
        }
        if (!first) {
            if (*c != ',')
                return m_cursor.malformed(m_window.offset(), "expected ',' or '}' between top-level members");
            m_window.consume(1);
        }
        std::string key;
        if (Status st = readKey(key); !st || m_truncated)
            return st;
        if (Status st = expect(':', "after a top-level key"); !st || m_truncated)
            return st;
        if (Status st = member(key); !st || m_truncated)
            return st;
    }
}

Status KinetoReader::readKey(std::string& key)
{
    auto c = m_cursor.peek();
    if (!c)
        return c.status();
    if (*c == 0) {
        truncated("the file ends inside the top-level object");
        return Status::ok();
    }
    if (*c != '"')
        return m_cursor.malformed(m_window.offset(), "expected a quoted key in the top-level object");
    std::string text;
    if (Status st = valueText(&text, 4096); !st || m_truncated)
        return st;
    if (text.size() < 2) {
        truncated("the file ends inside a top-level key");
        return Status::ok();
    }
    key = text.substr(1, text.size() - 2);
    return Status::ok();
}

Status KinetoReader::member(const std::string& key)
{
    if (key == "nodes")
        m_sawNodes = true;
    if (key == "traceEvents") {
        auto c = m_cursor.peek();
        if (!c)
            return c.status();
        if (*c == '[') {
            m_window.consume(1);
            m_sawEvents = true;
            return eventArray(false);
        }
        m_out.count(format::Stat::ImportBadMetadata, "traceEvents is not an array");
    }
    std::string text;
    const bool keep = wantedMember(key);
    if (Status st = valueText(keep ? &text : nullptr, kMetadataLimit); !st)
        return st;
    if (keep && !m_truncated)
        m_impl->meta.apply(key, text);
    return Status::ok();
}

// Scans one JSON value at the window's front, appending its text to `text` (when given, up to `limit`
// bytes; larger values are skipped and counted) and consuming it.
Status KinetoReader::valueText(std::string* text, size_t limit)
{
    const uint64_t startOffset = m_window.offset();
    Status st = m_cursor.skip([&](const char* bytes, size_t n) {
        if (text && text->size() + n <= limit) {
            text->append(bytes, n);
        } else if (text) {
            m_out.count(format::Stat::ImportSkippedMetadata);
            text->clear();
            text = nullptr;
        }
    });
    if (st && m_cursor.truncated()) {
        if (text)
            text->clear();
        truncated("the file ends inside the top-level value at byte " + std::to_string(startOffset));
    }
    return st;
}

Status KinetoReader::eventArray(bool rootArray)
{
    for (;;) {
        if (Status st = m_window.fill(); !st)
            return st;
        size_t i = 0;
        while (i < m_window.size() && (isSpace(m_window.data()[i]) || m_window.data()[i] == ','))
            ++i;
        m_window.consume(i);
        if (m_impl->pipeline && m_window.size() > 0 && m_window.data()[0] != ']') {
            auto sent = submitUnit();
            if (!sent)
                return sent.status();
            if (*sent)
                continue;
        }
        bool fellBack = false; // everything in flight goes first, in order
        if (Status st = drain(fellBack); !st)
            return st;
        if (fellBack)
            continue;
        if (m_window.size() == 0) {
            if (!m_window.eof())
                continue;
            if (!rootArray) // Chrome's JSON array format may omit the closing ']'; an object may not
                truncated("the file ends inside traceEvents");
            return Status::ok();
        }
        if (m_window.data()[0] == ']') {
            m_window.consume(1);
            return Status::ok();
        }
        auto end = parseWindow();
        if (!end)
            return end.status();
        if (*end == WindowEnd::ArrayEnd)
            return Status::ok();
        if (*end == WindowEnd::Truncated) {
            truncated("the file ends inside a trace event");
            return Status::ok();
        }
        if (m_options.progress && !m_options.progress(m_source.fileBytesRead()))
            return Status::error(m_source.path() + ": import cancelled");
    }
}

// Hands the window's whole elements to the workers: up to the first element that starts after the last
// newline before the window's final sixteenth (a newline is outside any string, so the scan starting there
// knows where strings are). False when no such boundary shows (a single-line file, one huge element,
// the array's end): the sequential path takes the window then.
Expected<bool> KinetoReader::submitUnit()
{
    const size_t kTail = m_window.windowBytes() / 16; // 64 KiB of a 1 MiB window
    const size_t n = m_window.size();
    if (m_window.eof() || n < 4 * kTail)
        return false;
    const char* d = m_window.data();
    const void* nl = memrchr(d + n / 2, '\n', n - kTail - n / 2);
    size_t next = 0;
    if (!nl || !JsonScanner::nextElement(d, size_t(static_cast<const char*>(nl) - d) + 1, n, next) || next == 0)
        return false;
    while (m_impl->pipeline->inFlight() >= 2 * m_impl->pipeline->workers() + 1) {
        auto taken = takeUnit();
        if (!taken)
            return taken.status();
        if (!m_impl->pipeline) // a unit failed: its bytes are back in the window
            return true;
    }
    // The unit takes the window's buffer over (no copy of its bytes); the window goes on with the rest.
    const uint64_t offset = m_window.offset();
    char* bytes = nullptr;
    size_t alloc = 0;
    auto buffer = m_window.detachFront(next, &bytes, &alloc);
    const size_t capacity = alloc - size_t(bytes - 1 - buffer.get());
    m_impl->pipeline->submit(KinetoPipeline::makeUnit(std::move(buffer), bytes, next, capacity, offset));
    return true;
}

Expected<bool> KinetoReader::takeUnit()
{
    if (!m_impl->pipeline)
        return false;
    std::unique_ptr<KinetoUnit> u = m_impl->pipeline->takeOldest();
    if (!u)
        return false;
    if (!u->ok) { // re-read from this unit on, sequentially: it reports what is wrong and where
        std::string back(u->bytes(), u->size);
        while (auto later = m_impl->pipeline->takeOldest())
            back.append(later->bytes(), later->size);
        m_impl->pipeline.reset();
        m_window.prepend(back.data(), back.size());
        return false;
    }
    for (const KinetoRawEvent& r : u->events)
        m_impl->events.dispatch(r);
    m_elements += u->events.size();
    ++m_units;
    if (m_options.progress && !m_options.progress(m_source.fileBytesRead()))
        return Status::error(m_source.path() + ": import cancelled");
    return true;
}

Status KinetoReader::drain(bool& fellBack)
{
    fellBack = false;
    while (m_impl->pipeline && m_impl->pipeline->inFlight() > 0) {
        auto taken = takeUnit();
        if (!taken)
            return taken.status();
        if (!m_impl->pipeline) {
            fellBack = true;
            return Status::ok();
        }
    }
    return Status::ok();
}

// Where to end this window: after the last newline (outside any string), else the window's end.
size_t KinetoReader::chooseCut()
{
    const size_t n = m_window.size();
    if (m_window.eof())
        return n;
    const size_t look = std::min<size_t>(n, 1u << 20);
    const void* nl = memrchr(m_window.data() + n - look, '\n', look);
    return nl ? static_cast<size_t>(static_cast<const char*>(nl) - m_window.data()) : n;
}

bool KinetoReader::moveCutBeforeQuote(size_t& cut)
{
    const void* q = cut > 0 ? memrchr(m_window.data(), '"', cut) : nullptr;
    if (!q)
        return false;
    cut = static_cast<size_t>(static_cast<const char*>(q) - m_window.data());
    return true;
}

Expected<KinetoReader::WindowEnd> KinetoReader::parseWindow()
{
    char* d = m_window.data();
    size_t cut = chooseCut();
    simdjson::ondemand::document doc;
    char saved = 0, savedNext = 0;
    if (size_t fixed = JsonScanner::repairSurrogates(d, cut))
        m_out.count(format::Stat::ImportLoneSurrogates, fixed);
    for (int attempt = 0;; ++attempt) {
        saved = d[cut];
        savedNext = d[cut + 1];
        d[-1] = '[';
        d[cut] = ']';
        d[cut + 1] = ' '; // a ']' right after the document makes simdjson rescan it for balance
        auto err = m_impl->parser.iterate(d - 1, cut + 2, m_window.capacityFrom(d - 1)).get(doc);
        if (!err)
            break;
        d[cut] = saved;
        d[cut + 1] = savedNext;
        bool cutTail = false;
        if (err == simdjson::UTF8_ERROR) {
            if (size_t fixed = JsonScanner::repairUtf8(d, cut, cutTail)) {
                m_out.count(format::Stat::ImportInvalidUtf8, fixed);
                continue;
            }
        }
        const bool cutProblem = err == simdjson::UNCLOSED_STRING || (err == simdjson::UTF8_ERROR && cutTail);
        if (!cutProblem || attempt >= kMaxCutRetries)
            return m_cursor.malformed(m_window.offset(), simdjson::error_message(err));
        if (!moveCutBeforeQuote(cut) || cut == 0)
            return elementFailed(0, cut, simdjson::error_message(err), nullptr);
    }
    simdjson::ondemand::array arr;
    if (auto err = doc.get_array().get(arr))
        return m_cursor.malformed(m_window.offset(), simdjson::error_message(err));
    auto restore = [&] {
        d[cut] = saved;
        d[cut + 1] = savedNext;
    };
    bool atSentinel = false;
    size_t lastEnd = 0; // just after the last element parsed (its separator follows)
    for (auto element : arr) {
        const char* loc = nullptr;
        if (element.error()) { // between elements: a missing comma, stray bytes
            size_t start = lastEnd;
            while (start < cut && (isSpace(d[start]) || d[start] == ','))
                ++start;
            (void)doc.current_location().get(loc);
            restore();
            return elementFailed(start, cut, simdjson::error_message(element.error()), loc);
        }
        if (element.current_location().get(loc) || loc < d || static_cast<size_t>(loc - d) >= cut) {
            atSentinel = true; // a separator right before the cut
            break;
        }
        const auto start = static_cast<size_t>(loc - d);
        simdjson::ondemand::value v;
        // simdjson's get() is for rvalues only: the move is how it is called, not a copy saved.
        auto err = std::move(element).get(v); // NOLINT(performance-move-const-arg)
        if (!err && m_impl->events.parse(v) != KinetoEventParser::Result::JsonError) {
            ++m_elements;
            const char* after = nullptr;
            lastEnd = doc.current_location().get(after) || after < d ? cut : static_cast<size_t>(after - d);
            continue;
        }
        const char* errorAt = nullptr;
        (void)doc.current_location().get(errorAt);
        restore();
        return elementFailed(start, cut, simdjson::error_message(err ? err : m_impl->events.error()), errorAt);
    }
    // The loop ended at a ']': the sentinel at the cut, or the array's own one before it. After the
    // array's own, the next token (at most the sentinel) is at or before the cut.
    const char* end = nullptr;
    if (!atSentinel && !doc.current_location().get(end) && end > d && static_cast<size_t>(end - d) <= cut) {
        size_t p = static_cast<size_t>(end - d);
        while (p > 0 && isSpace(d[p - 1]))
            --p;
        restore();
        if (p == 0 || d[p - 1] != ']')
            return m_cursor.malformed(m_window.offset() + p, "expected ',' or ']' after a trace event");
        m_window.consume(p);
        return WindowEnd::ArrayEnd;
    }
    restore();
    m_window.consume(cut);
    return WindowEnd::More;
}

// An element failed to parse: incomplete (it continues past the cut: carry it into the next window)
// or malformed (it is complete and still fails: an error naming its offset).
Expected<KinetoReader::WindowEnd> KinetoReader::elementFailed(
    size_t start, size_t cut, const char* error, const char* errorAt)
{
    char* d = m_window.data();
    JsonScanner scanner;
    size_t used = 0;
    const auto state = scanner.feed(d + start, cut - start, used, m_window.eof() && cut == m_window.size());
    if (state == JsonScanner::State::Invalid)
        return m_cursor.malformed(m_window.offset() + start + used, scanner.error());
    if (state == JsonScanner::State::Complete) {
        size_t at = start;
        if (errorAt && errorAt >= d + start && errorAt <= d + start + used)
            at = static_cast<size_t>(errorAt - d);
        return m_cursor.malformed(m_window.offset() + at,
            std::string(error) + " (in the trace event starting at byte " + std::to_string(m_window.offset() + start)
                + ")");
    }
    m_window.consume(start);
    if (start > 0)
        return WindowEnd::More;
    if (m_window.eof())
        return WindowEnd::Truncated;
    if (m_window.windowBytes() >= m_options.maxEventBytes)
        return m_cursor.malformed(
            m_window.offset(), "a trace event larger than " + std::to_string(m_options.maxEventBytes >> 20) + " MiB");
    m_window.growWindow(m_window.windowBytes() * 2); // one element larger than the window
    return WindowEnd::More;
}

} // namespace gapscope::model::importer
