// SPDX-License-Identifier: MIT
#pragma once

// Status and Expected<T>: errors as values for model/, model/format and capture/.
// Exceptions never cross a library boundary; functions that can fail return one of these.
// A Status carries a human-readable message that names what failed and where
// ("trace.gapscope: offset 4096: frame checksum mismatch").

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace gapscope {

class [[nodiscard]] Status {
public:
    Status() = default;
    static Status ok() { return Status(); }
    static Status error(std::string message) { return Status(std::move(message), true); }

    bool isOk() const { return !m_failed; }
    explicit operator bool() const { return !m_failed; }
    const std::string& message() const { return m_message; }

    // Prefixes the message with context ("file.gapscope: " + message).
    Status withContext(const std::string& context) const
    {
        return m_failed ? Status(context + ": " + m_message, true) : *this;
    }

private:
    Status(std::string message, bool failed)
        : m_message(std::move(message))
        , m_failed(failed)
    {
    }
    std::string m_message;
    bool m_failed = false;
};

template <typename T>
class [[nodiscard]] Expected {
public:
    Expected(T value)
        : m_value(std::move(value))
    {
    }
    Expected(Status status)
        : m_status(std::move(status))
    {
        assert(!m_status.isOk() && "Expected constructed from an ok Status without a value");
        if (m_status.isOk())
            m_status = Status::error("internal error: empty Expected");
    }

    bool hasValue() const { return m_value.has_value(); }
    explicit operator bool() const { return hasValue(); }
    const Status& status() const { return m_status; }
    const std::string& error() const { return m_status.message(); }

    T& value() & { return *m_value; }
    const T& value() const& { return *m_value; }
    T&& value() && { return std::move(*m_value); }
    T* operator->() { return &*m_value; }
    const T* operator->() const { return &*m_value; }
    T& operator*() { return *m_value; }
    const T& operator*() const { return *m_value; }

private:
    std::optional<T> m_value;
    Status m_status;
};

} // namespace gapscope
