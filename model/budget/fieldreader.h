// SPDX-License-Identifier: MIT
#pragma once

// FieldReader: typed, range-checked access to the members of one JSON object (a config.json, a
// hardware preset, a calibration profile). The first problem is kept as a Status that names the
// input and the field ("config.json: num_hidden_layers: expected an integer in [1, 4096], got -3");
// later reads still return their fallback so a caller can read everything and check once.
// A member that is absent or null reads as its fallback. Not thread-safe; cheap to create.

#include "model/base/json.h"
#include "model/base/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::model {

class FieldReader {
public:
    FieldReader(const json::Value& object, std::string what);

    bool has(const char* key) const; // present and not null
    // Integers; a number with a fraction or outside [lo, hi] is an error.
    uint64_t u64(const char* key, uint64_t fallback, uint64_t lo, uint64_t hi);
    uint32_t u32(const char* key, uint32_t fallback, uint32_t lo, uint32_t hi)
    {
        return static_cast<uint32_t>(u64(key, fallback, lo, hi));
    }
    double number(const char* key, double fallback, double lo, double hi);
    bool boolean(const char* key, bool fallback);
    std::string string(const char* key, const std::string& fallback = {});
    // Arrays of strings (non-strings are errors), capped at `maxItems`.
    std::vector<std::string> strings(const char* key, size_t maxItems = 100000);
    const json::Value* object(const char* key); // nullptr when absent; error when not an object
    const json::Value* array(const char* key); // nullptr when absent; error when not an array

    void fail(const std::string& key, const std::string& message);
    const Status& status() const { return m_status; }
    const std::string& what() const { return m_what; }

private:
    const json::Value* member(const char* key) const;
    const json::Value& m_object;
    std::string m_what;
    Status m_status;
};

// A short JSON rendering of a value for error messages (at most ~40 characters).
std::string describeJson(const json::Value& v);

} // namespace gapscope::model
