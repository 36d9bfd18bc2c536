// SPDX-License-Identifier: MIT
#pragma once

// KinetoPipeline: parses runs of whole traceEvents elements (KinetoUnit) on worker threads, so a big
// Kineto file uses every core: the reader cuts the stream into units at element boundaries, workers
// read each unit's elements into KinetoRawEvents (simdjson stage 1 and the field reading, most of the
// work), and the reader's thread takes the units back in stream order and dispatches their events into
// the staged trace (strings, lanes, launch configs: cheap, and order-dependent).
//
// A unit that does not parse cleanly from its first byte to its last (a boundary guessed wrong, a
// malformed or non-UTF-8 document) comes back with ok = false and its bytes intact; the reader then
// re-reads from there on its sequential path, which reports errors with their offsets.
//
// Memory: the units in flight (bounded by the caller, about 2 per worker), each its bytes plus its
// parsed events. Threading: submit / takeOldest from one thread; workers only touch the unit they parse.

#include "model/import/kinetofieldreader.h"
#include "model/import/kinetorawevent.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gapscope::model::importer {

struct KinetoUnit {
    uint64_t offset = 0; // stream offset of the first byte
    std::unique_ptr<char[]> buffer; // holds '[' + bytes + ']' + padding at `base`, parsed in place
    char* base = nullptr; // the '['
    size_t capacity = 0; // writable bytes from base
    size_t size = 0; // bytes, without the brackets
    std::vector<KinetoRawEvent> events;
    std::deque<std::string> arena; // unescaped strings the events point to
    bool ok = false;
    bool done = false;
    const char* bytes() const { return base + 1; }
};

class KinetoPipeline {
public:
    explicit KinetoPipeline(unsigned workers);
    ~KinetoPipeline();
    KinetoPipeline(const KinetoPipeline&) = delete;
    KinetoPipeline& operator=(const KinetoPipeline&) = delete;

    // A unit of the `n` bytes at `bytes`, inside `buffer` (taken over, not copied): bytes[-1] and
    // bytes[n .. n + 1 + padding) must be writable; `capacity` counts the writable bytes from bytes[-1].
    static std::unique_ptr<KinetoUnit> makeUnit(
        std::unique_ptr<char[]> buffer, char* bytes, size_t n, size_t capacity, uint64_t offset);
    void submit(std::unique_ptr<KinetoUnit> unit);
    // The oldest unit submitted, once parsed; nullptr when none is in flight.
    std::unique_ptr<KinetoUnit> takeOldest();
    size_t inFlight() const;
    unsigned workers() const { return unsigned(m_threads.size()); }

private:
    void work();

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::unique_ptr<KinetoUnit>> m_units; // in stream order
    size_t m_next = 0; // first unit no worker has taken
    bool m_stop = false;
    std::vector<std::thread> m_threads;
};

} // namespace gapscope::model::importer
