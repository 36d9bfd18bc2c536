// SPDX-License-Identifier: MIT
#pragma once

// KinetoReader: streams one Kineto / Chrome-trace JSON file (plain or gzip) into a StagedTrace.
//
// Algorithm: the top-level object is walked with a small scalar scanner (JsonScanner): metadata
// members are captured whole and handed to KinetoMetadata, anything big and unknown is skipped. The
// "traceEvents" array - nearly all of the bytes - is parsed in windows of a few MiB: the window is
// cut after the last newline (a newline is always outside a JSON string), wrapped in place as
// "[" + bytes + "]", and parsed with simdjson On-Demand; each element goes to KinetoEventParser. The
// element the cut split fails to parse; the scanner confirms it is merely incomplete, and it starts
// the next window. Single-line files have no newline to cut at: the cut then falls at the window end,
// and when simdjson reports an unclosed string it moves back before the last quote. Memory is bounded
// by the window, not the file. With workers (KinetoPipeline), windows are cut at verified element
// boundaries instead and parsed on other threads, their events dispatched here in stream order.
//
// Errors: malformed JSON fails with the byte offset (of the decompressed stream for .gz) and what was
// wrong; a file that ends early keeps what parsed and records a warning plus an "import_truncated"
// counter; invalid UTF-8 inside strings is replaced by '?' and counted. A whole top-level object without
// a "traceEvents" array (a PyTorch execution trace, `{}`, any other JSON) is not a Kineto trace: an
// error saying so. With Options::failWhenEmpty, a trace that yields no event is an error naming what
// its trace events were (CPU operators only, unknown kinds). Threading: one thread.
// simdjson stays out of this header (Impl): its types differ with the library's build options.

#include "model/import/bytesource.h"
#include "model/import/jsoncursor.h"
#include "model/import/jsonwindow.h"
#include "model/import/stagedtrace.h"

#include <functional>
#include <memory>
#include <string>

namespace gapscope::model::importer {

class KinetoReader {
public:
    struct Options {
        size_t windowBytes = 1u << 20;
        unsigned workers = 0; // threads parsing traceEvents beside this one (0: all on this thread)
        size_t maxEventBytes = 256u << 20; // one traceEvents element larger than this is an error
        bool failWhenEmpty = false; // a file that yields no event at all is an error naming what it held
        std::function<bool(uint64_t fileBytesRead)> progress; // return false to cancel
    };

    KinetoReader(ByteSource& source, StagedTrace& out, Options options);
    ~KinetoReader();
    Status read();
    uint64_t elements() const { return m_elements; }

private:
    enum class WindowEnd { More, ArrayEnd, Truncated };

    Status topObject();
    Status member(const std::string& key);
    Status readKey(std::string& key);
    Status valueText(std::string* text, size_t limit);
    Status expect(char c, const char* context);
    Status eventArray(bool rootArray);
    Expected<WindowEnd> parseWindow();
    Expected<bool> submitUnit();
    Expected<bool> takeUnit(); // dispatches the oldest unit in flight; false when none or on fallback
    Status drain(bool& fellBack);
    Expected<WindowEnd> elementFailed(size_t start, size_t cut, const char* error, const char* errorAt);
    size_t chooseCut();
    bool moveCutBeforeQuote(size_t& cut);
    void truncated(const std::string& where);
    Status notKineto() const;
    Status nothingImported() const;

    ByteSource& m_source;
    StagedTrace& m_out;
    Options m_options;
    JsonWindow m_window;
    JsonCursor m_cursor; // over m_window: where(), malformed(), peek()
    struct Impl;
    std::unique_ptr<Impl> m_impl; // simdjson parser, event parser, metadata
    uint64_t m_elements = 0;
    uint64_t m_units = 0; // parsed by the workers
    bool m_sawEvents = false;
    bool m_sawNodes = false; // a top-level "nodes" member: PyTorch's execution trace, not Kineto's
    bool m_truncated = false;
};

} // namespace gapscope::model::importer
