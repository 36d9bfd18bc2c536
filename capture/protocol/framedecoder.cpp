// SPDX-License-Identifier: MIT
#include "capture/protocol/framedecoder.h"

#include "capture/protocol/framing.h"

namespace gapscope::capture {

FrameDecoder::FrameDecoder(uint32_t maxFrameBytes)
    : m_limit(maxFrameBytes)
{
}

void FrameDecoder::compact()
{
    // Move the unread tail to the front once the consumed prefix dominates, so appends stay amortised.
    if (m_pos > 0 && (m_pos == m_buf.size() || m_pos >= m_buf.size() / 2)) {
        m_buf.erase(0, m_pos);
        m_pos = 0;
    }
}

void FrameDecoder::releaseIdle()
{
    if (buffered() == 0)
        discard();
}

void FrameDecoder::discard()
{
    std::string().swap(m_buf);
    m_pos = 0;
    m_prepared = 0;
}

void FrameDecoder::append(const char* data, size_t size)
{
    compact();
    m_buf.append(data, size);
}

char* FrameDecoder::prepare(size_t size)
{
    compact();
    m_prepared = m_buf.size();
    m_buf.resize(m_prepared + size);
    return &m_buf[m_prepared];
}

void FrameDecoder::commit(size_t n)
{
    m_buf.resize(m_prepared + n);
}

FrameDecoder::Result FrameDecoder::next(std::string_view& payload)
{
    if (m_rejected)
        return Result::TooLarge;
    const size_t avail = m_buf.size() - m_pos;
    if (avail < kFrameHeaderBytes)
        return Result::NeedMore;
    const uint32_t len = getU32LE(m_buf.data() + m_pos);
    if (len > m_limit) {
        m_rejected = len;
        return Result::TooLarge;
    }
    if (avail - kFrameHeaderBytes < len)
        return Result::NeedMore;
    payload = std::string_view(m_buf.data() + m_pos + kFrameHeaderBytes, len);
    m_pos += kFrameHeaderBytes + len;
    return Result::Frame;
}

} // namespace gapscope::capture
