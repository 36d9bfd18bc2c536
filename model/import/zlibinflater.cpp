// SPDX-License-Identifier: MIT
// Inflater::zlib(): gzip (or zlib) members with zlib's inflate.
#include "model/import/inflater.h"

#include <algorithm>
#include <zlib.h>

namespace gapscope::model::importer {

namespace {

class ZlibInflater final : public Inflater {
public:
    ZlibInflater() { m_ok = inflateInit2(&m_zs, 15 + 32) == Z_OK; } // 15 + 32: gzip or zlib header, detected
    ~ZlibInflater() override
    {
        if (m_ok)
            inflateEnd(&m_zs);
    }
    bool ok() const { return m_ok; }
    Step inflate(const uint8_t* in, size_t inLen, uint8_t* out, size_t outLen) override
    {
        Step s;
        m_zs.next_in = const_cast<Bytef*>(in);
        m_zs.avail_in = static_cast<uInt>(std::min<size_t>(inLen, 1u << 30));
        m_zs.next_out = out;
        m_zs.avail_out = static_cast<uInt>(std::min<size_t>(outLen, 1u << 30));
        const uInt inBefore = m_zs.avail_in, outBefore = m_zs.avail_out;
        const int rc = ::inflate(&m_zs, Z_NO_FLUSH);
        s.consumed = inBefore - m_zs.avail_in;
        s.produced = outBefore - m_zs.avail_out;
        s.memberEnd = rc == Z_STREAM_END;
        if (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END)
            s.error = m_zs.msg ? m_zs.msg : "inflate error " + std::to_string(rc);
        return s;
    }
    void nextMember() override { inflateReset(&m_zs); }

private:
    z_stream m_zs {};
    bool m_ok = false;
};

} // namespace

std::unique_ptr<Inflater> Inflater::zlib()
{
    auto z = std::make_unique<ZlibInflater>();
    if (!z->ok())
        return nullptr;
    return z;
}

} // namespace gapscope::model::importer
