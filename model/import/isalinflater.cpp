// SPDX-License-Identifier: MIT
// Inflater::isal(): gzip members with ISA-L's igzip (isal_inflate), CRC and size of each checked.
#include "model/import/inflater.h"

#include <algorithm>
#include <isa-l/igzip_lib.h>

namespace gapscope::model::importer {

namespace {

const char* isalError(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
        return "invalid back-reference distance";
    case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM:
        return "CRC or length check failed";
    default:
        return "inflate error";
    }
}

class IsalInflater final : public Inflater {
public:
    IsalInflater() { nextMember(); }
    Step inflate(const uint8_t* in, size_t inLen, uint8_t* out, size_t outLen) override
    {
        Step s;
        m_state.next_in = const_cast<uint8_t*>(in);
        m_state.avail_in = static_cast<uint32_t>(std::min<size_t>(inLen, 1u << 30));
        m_state.next_out = out;
        m_state.avail_out = static_cast<uint32_t>(std::min<size_t>(outLen, 1u << 30));
        const uint32_t inBefore = m_state.avail_in, outBefore = m_state.avail_out;
        const int rc = isal_inflate(&m_state);
        s.consumed = inBefore - m_state.avail_in;
        s.produced = outBefore - m_state.avail_out;
        if (rc < 0)
            s.error = isalError(rc);
        else
            s.memberEnd = m_state.block_state == ISAL_BLOCK_FINISH;
        return s;
    }
    void nextMember() override
    {
        isal_inflate_init(&m_state);
        m_state.crc_flag = ISAL_GZIP; // parse the gzip header, check the trailer's CRC and size
    }

private:
    inflate_state m_state {};
};

} // namespace

std::unique_ptr<Inflater> Inflater::isal()
{
    return std::make_unique<IsalInflater>();
}

} // namespace gapscope::model::importer
