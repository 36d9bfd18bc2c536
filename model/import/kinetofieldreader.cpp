// SPDX-License-Identifier: MIT
#include "model/import/kinetofieldreader.h"

#include "model/import/decimal.h"
#include "model/import/stringpool.h"

#include <cstring>

namespace gapscope::model::importer {

namespace od = simdjson::ondemand;

namespace {

// Keys are compared on simdjson's raw key text, closing quote included ("ph\"").
template <size_t N> inline bool keyIs(const char* raw, const char (&lit)[N])
{
    return std::memcmp(raw, lit, N - 1) == 0;
}

inline bool isDataError(simdjson::error_code e)
{
    return e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_ERROR || e == simdjson::NUMBER_OUT_OF_RANGE;
}

// A raw string token ("X"  ) without its quotes and trailing blanks; empty if not a plain string.
std::string_view unquote(std::string_view t)
{
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
        t.remove_suffix(1);
    if (t.size() < 2 || t.front() != '"' || t.back() != '"')
        return {};
    return t.substr(1, t.size() - 2);
}

uint64_t hashText(std::string_view s)
{
    return StringPool::hash(s);
}

} // namespace

bool KinetoFieldReader::read(od::value element, KinetoRawEvent& r)
{
    od::object obj;
    if (auto e = element.get_object().get(obj)) {
        if (!isDataError(e)) {
            m_error = e;
            return false;
        }
        r.bad = "traceEvents element that is not an object";
        return true;
    }
    if (!readFields(obj, r))
        return false;
    r.nameHash = StringPool::hash(r.name); // here, so that workers do it beside the parsing
    return true;
}

// Value readers: false only on a structural error (m_error set); a value of another type is ignored.
bool KinetoFieldReader::readToken(od::value& v, std::string_view& out)
{
    out = v.raw_json_token(); // cannot fail: the token is where the iterator stands
    return true;
}

bool KinetoFieldReader::readInt(od::value& v, int64_t& out)
{
    std::string_view t;
    if (!readToken(v, t))
        return false;
    int64_t x;
    if (parseInteger(t, x))
        out = x;
    return true;
}

// Strings without escapes (nearly all: kernel names, categories) are used in place in the input; the
// others are unescaped by simdjson.
bool KinetoFieldReader::readString(od::value& v, std::string_view& out)
{
    const std::string_view t = unquote(v.raw_json_token());
    if (!t.empty() && std::memchr(t.data(), '\\', t.size()) == nullptr) {
        out = t;
        return true;
    }
    auto e = v.get_string().get(out);
    if (e && !isDataError(e)) {
        m_error = e;
        return false;
    }
    if (!e && m_arena) // the unescaped text lives in the parser until its next document
        out = m_arena->emplace_back(out);
    return true;
}

// pid / tid: numbers, or strings ("Spans", "stream 7") identified by their hash; a string of digits
// ("832", as some writers quote thread ids) is that number, the same thread as 832 unquoted.
bool KinetoFieldReader::readId(od::value& v, int64_t& id, bool& isString)
{
    std::string_view t;
    if (!readToken(v, t))
        return false;
    if (parseInteger(t, id)) {
        isString = false;
        return true;
    }
    std::string_view s = unquote(t);
    isString = true;
    if (parseInteger(s, id) || (s.rfind("stream ", 0) == 0 && parseInteger(s.substr(7), id))) // older Kineto: "stream 7"
        isString = false;
    else
        id = static_cast<int64_t>(hashText(s) & 0x7FFFFFFFFFFFFFFFull);
    return true;
}

bool KinetoFieldReader::readDim(od::value& v, uint32_t (&dim)[3])
{
    od::array a;
    auto e = v.get_array().get(a);
    if (e)
        return isDataError(e) || (m_error = e, false);
    size_t i = 0;
    for (auto item : a) {
        int64_t x = 0;
        if (auto ie = item.get_int64().get(x); ie && !isDataError(ie)) {
            m_error = ie;
            return false;
        }
        if (i < 3)
            dim[i++] = static_cast<uint32_t>(x);
    }
    return true;
}

bool KinetoFieldReader::readFields(od::object& obj, KinetoRawEvent& r)
{
    for (auto fieldResult : obj) {
        od::field field;
        if (auto e = std::move(fieldResult).get(field)) {
            m_error = e;
            return false;
        }
        if (!readField(field.key().raw(), field.value(), r))
            return false;
    }
    return true;
}

bool KinetoFieldReader::readField(const char* k, od::value v, KinetoRawEvent& r)
{
    std::string_view t;
    switch (k[0]) {
    case 'p':
        if (keyIs(k, "ph\""))
            r.ph = unquote(v.raw_json_token());
        else if (keyIs(k, "pid\"")) {
            t = v.raw_json_token();
            r.hasPid = readId(v, r.pid, r.pidString);
            if (r.pidString)
                r.pidText = unquote(t); // SGLang's merged files: "[TP01] 1234" (SglangRanks)
        }
        return true;
    case 'c':
        if (keyIs(k, "cat\""))
            r.cat = unquote(v.raw_json_token());
        return true;
    case 'n':
        return keyIs(k, "name\"") ? readString(v, r.name) : true;
    case 't':
        if (keyIs(k, "ts\"")) {
            t = v.raw_json_token();
            r.hasTs = parseMicrosToNanos(t.front() == '"' ? unquote(t) : t, r.ts);
            r.bad = r.hasTs ? r.bad : "unreadable ts";
        } else if (keyIs(k, "tid\"")) {
            r.hasTid = readId(v, r.tid, r.tidString);
        }
        return true;
    case 'd':
        if (keyIs(k, "dur\"")) {
            t = v.raw_json_token();
            if (!parseMicrosToNanos(t.front() == '"' ? unquote(t) : t, r.dur))
                r.bad = "unreadable dur";
        }
        return true;
    case 'a':
        return keyIs(k, "args\"") ? readArgs(v, r) : true;
    case 'i':
        if (keyIs(k, "id\""))
            r.hasId = readInt(v, r.id);
        return true;
    case 'b':
        if (keyIs(k, "bp\""))
            r.bp = unquote(v.raw_json_token());
        return true;
    default:
        return true;
    }
}

bool KinetoFieldReader::readArgs(od::value v, KinetoRawEvent& r)
{
    od::object args;
    if (auto e = v.get_object().get(args))
        return isDataError(e) || (m_error = e, false);
    for (auto fieldResult : args) {
        od::field field;
        if (auto e = std::move(fieldResult).get(field)) {
            m_error = e;
            return false;
        }
        if (!readArgsField(field.key().raw(), field.value(), r))
            return false;
    }
    return true;
}

bool KinetoFieldReader::readArgsField(const char* k, od::value v, KinetoRawEvent& r)
{
    switch (k[0]) {
    case 'd':
        if (keyIs(k, "device\""))
            return readInt(v, r.device);
        if (keyIs(k, "dtype\""))
            return readString(v, r.dtype);
        return true;
    case 's':
        if (keyIs(k, "stream\""))
            return readInt(v, r.stream);
        if (keyIs(k, "shared memory\""))
            return readInt(v, r.sharedMemory);
        return true;
    case 'c':
        return keyIs(k, "correlation\"") ? readInt(v, r.correlation) : true;
    case 'r':
        return keyIs(k, "registers per thread\"") ? readInt(v, r.registers) : true;
    case 'g':
        if (keyIs(k, "grid\""))
            return readDim(v, r.grid);
        if (keyIs(k, "graph id\"") || keyIs(k, "graph_id\""))
            return readInt(v, r.graphId);
        if (keyIs(k, "graph node id\""))
            return readInt(v, r.graphNodeId);
        return true;
    case 'b':
        if (keyIs(k, "block\""))
            return readDim(v, r.block);
        return keyIs(k, "bytes\"") ? readInt(v, r.bytes) : true;
    case 'C':
        return keyIs(k, "Collective name\"") ? readString(v, r.collective) : true;
    case 'I':
        return keyIs(k, "In msg nelems\"") ? readInt(v, r.nelems) : true;
    case 'P':
        return keyIs(k, "Process Group Name\"") ? readString(v, r.pgName) : true;
    case 'n':
        return keyIs(k, "name\"") ? readString(v, r.metaName) : true;
    case 'l':
        return keyIs(k, "labels\"") ? readString(v, r.labels) : true;
    case 'w':
        return keyIs(k, "wait_on_stream\"") ? readInt(v, r.waitStream) : true;
    default:
        return true;
    }
}

} // namespace gapscope::model::importer
