// SPDX-License-Identifier: MIT
#pragma once

// PrefetchByteSource: reads another ByteSource ahead on a background thread, in blocks of 1 MiB with
// at most `depth` blocks waiting, so reading and gzip inflation overlap the parsing that consumes the
// bytes. Memory: depth + 1 blocks. Errors of the inner source surface, in order, from read().
//
// Threading: read() and the accessors from one consumer thread; the destructor stops and joins the
// reader thread (it may be blocked on a full queue, never on the consumer).

#include "model/import/bytesource.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace gapscope::model::importer {

class PrefetchByteSource final : public ByteSource {
public:
    explicit PrefetchByteSource(std::unique_ptr<ByteSource> inner, size_t blockBytes = 1u << 20, size_t depth = 8);
    ~PrefetchByteSource() override;
    PrefetchByteSource(const PrefetchByteSource&) = delete;
    PrefetchByteSource& operator=(const PrefetchByteSource&) = delete;

    Expected<size_t> read(char* dst, size_t n) override;
    uint64_t fileBytesRead() const override { return m_fileBytes; }
    bool compressed() const override { return m_compressed; }
    bool truncated() const override { return m_truncated; }

private:
    struct Block {
        std::vector<char> data;
        size_t size = 0;
        uint64_t fileBytes = 0; // inner fileBytesRead() after this block
    };
    void run();
    bool nextBlock(); // false at the end of the stream or on error (m_error)

    std::unique_ptr<ByteSource> m_inner;
    const size_t m_blockBytes;
    const size_t m_depth;
    const bool m_compressed;

    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Block> m_ready; // filled by the reader thread
    std::vector<std::vector<char>> m_free; // recycled buffers
    bool m_finished = false;   // the reader thread has pushed its last block
    bool m_stop = false;
    Status m_status;           // the inner source's error, if any
    bool m_innerTruncated = false;

    Block m_current; // consumer side
    size_t m_pos = 0;
    uint64_t m_fileBytes = 0;
    bool m_truncated = false;
    std::thread m_thread;
};

} // namespace gapscope::model::importer
