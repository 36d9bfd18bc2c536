// SPDX-License-Identifier: MIT
#pragma once

// KinetoFieldReader: reads one element of a Kineto "traceEvents" array (a simdjson On-Demand value)
// into a KinetoRawEvent: ph, cat, name, pid, tid, ts, dur, id, bp and the args the importer keeps
// (device, stream, correlation, grid, block, registers, shared memory, bytes, graph ids, collective
// details, metadata names). Keys are compared on simdjson's raw key text; numbers are parsed from
// their raw text (timestamps as exact fixed point); strings without escapes are views into the input.
//
// A structural JSON error stops the read (read() returns false, error() says what); a value of an
// unexpected type only marks the event (KinetoRawEvent::bad) or is ignored, and the element is still
// consumed. With an arena set, strings that needed unescaping are copied there (the parser's own
// string buffer is reused by the next document).
//
// Threading: one reader per thread (it holds the last error).

#include "model/import/kinetorawevent.h"

#include <simdjson.h>

#include <deque>
#include <string>

namespace gapscope::model::importer {

class KinetoFieldReader {
public:
    bool read(simdjson::ondemand::value element, KinetoRawEvent& r);
    simdjson::error_code error() const { return m_error; }
    void setArena(std::deque<std::string>* arena) { m_arena = arena; }

private:
    bool readFields(simdjson::ondemand::object& obj, KinetoRawEvent& r);
    bool readField(const char* key, simdjson::ondemand::value v, KinetoRawEvent& r);
    bool readArgs(simdjson::ondemand::value v, KinetoRawEvent& r);
    bool readArgsField(const char* key, simdjson::ondemand::value v, KinetoRawEvent& r);
    bool readInt(simdjson::ondemand::value& v, int64_t& out);
    bool readString(simdjson::ondemand::value& v, std::string_view& out);
    bool readToken(simdjson::ondemand::value& v, std::string_view& out);
    bool readId(simdjson::ondemand::value& v, int64_t& id, bool& isString);
    bool readDim(simdjson::ondemand::value& v, uint32_t (&dim)[3]);

    simdjson::error_code m_error = simdjson::SUCCESS;
    std::deque<std::string>* m_arena = nullptr;
};

} // namespace gapscope::model::importer
