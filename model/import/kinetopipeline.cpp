// SPDX-License-Identifier: MIT
#include "model/import/kinetopipeline.h"

#include <cstring>

namespace gapscope::model::importer {

namespace {
// Reads every element of the unit; false unless the whole unit is a clean run of elements.
bool parseUnit(KinetoUnit& u, simdjson::ondemand::parser& parser, KinetoFieldReader& reader)
{
    simdjson::ondemand::document doc;
    if (parser.iterate(u.base, u.size + 2, u.capacity).get(doc))
        return false;
    simdjson::ondemand::array arr;
    if (doc.get_array().get(arr))
        return false;
    reader.setArena(&u.arena);
    const char* sentinel = u.base + 1 + u.size;
    bool atSentinel = false;
    for (auto element : arr) {
        const char* loc = nullptr;
        if (element.error() || element.current_location().get(loc))
            return false;
        if (loc >= sentinel) { // trailing separators
            atSentinel = true;
            break;
        }
        simdjson::ondemand::value v;
        if (std::move(element).get(v))
            return false;
        KinetoRawEvent& r = u.events.emplace_back();
        if (!reader.read(v, r))
            return false;
    }
    const char* end = nullptr;
    // Ended at the sentinel: nothing after it, or past it. Anything before it was a ']' of the data.
    return atSentinel || doc.current_location().get(end) || end > sentinel;
}
} // namespace

KinetoPipeline::KinetoPipeline(unsigned workers)
{
    for (unsigned i = 0; i < workers; ++i)
        m_threads.emplace_back([this] { work(); });
}

KinetoPipeline::~KinetoPipeline()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    for (auto& t : m_threads)
        t.join();
}

std::unique_ptr<KinetoUnit> KinetoPipeline::makeUnit(
    std::unique_ptr<char[]> buffer, char* bytes, size_t n, size_t capacity, uint64_t offset)
{
    auto u = std::make_unique<KinetoUnit>();
    u->offset = offset;
    u->size = n;
    u->buffer = std::move(buffer);
    u->base = bytes - 1;
    u->capacity = capacity;
    u->base[0] = '[';
    bytes[n] = ']';
    // The padding after it holds whatever followed (simdjson reads it, never past the ']'); a blank
    // right after the ']' keeps the document's end unambiguous.
    if (capacity > n + 2)
        bytes[n + 1] = ' ';
    u->events.reserve(n / 256);
    return u;
}

void KinetoPipeline::submit(std::unique_ptr<KinetoUnit> unit)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_units.push_back(std::move(unit));
    }
    m_cv.notify_all();
}

size_t KinetoPipeline::inFlight() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_units.size();
}

std::unique_ptr<KinetoUnit> KinetoPipeline::takeOldest()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    if (m_units.empty())
        return nullptr;
    m_cv.wait(lock, [this] { return m_units.front()->done; });
    auto u = std::move(m_units.front());
    m_units.pop_front();
    --m_next;
    return u;
}

void KinetoPipeline::work()
{
    simdjson::ondemand::parser parser;
    KinetoFieldReader reader;
    for (;;) {
        KinetoUnit* u = nullptr;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_cv.wait(lock, [this] { return m_stop || m_next < m_units.size(); });
            if (m_stop)
                return;
            u = m_units[m_next++].get();
        }
        try { // an exception must not leave the worker: the unit is then parsed again in order
            u->ok = parseUnit(*u, parser, reader);
        } catch (const std::exception&) {
            u->events.clear();
            u->ok = false;
        }
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            u->done = true;
        }
        m_cv.notify_all();
    }
}

} // namespace gapscope::model::importer
