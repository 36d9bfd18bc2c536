// SPDX-License-Identifier: MIT
#pragma once

// Unprivileged: while alive, the process runs as the user "nobody" (65534, real and effective ids,
// so access() answers as it would for that user) when it was root, so tests of "this file is
// read-only" can fail the way they do for users (root ignores file permissions). The saved ids stay
// root's, so it goes back to root when it goes out of scope. Not root: does nothing.
//
// Threading: the id calls apply to every thread of the process; use it only around the operation
// under test.

#include <sys/types.h>
#include <unistd.h> // setresuid, setresgid (glibc with _GNU_SOURCE, the default for g++ and clang++)

namespace gapscope::test {

class Unprivileged {
public:
    static constexpr uid_t kNobody = 65534;
    Unprivileged()
        : m_wasRoot(::geteuid() == 0)
        , m_gid(::getegid())
    {
        m_ok = !m_wasRoot
            || (::setresgid(kNobody, kNobody, m_gid) == 0 && ::setresuid(kNobody, kNobody, 0) == 0);
    }
    ~Unprivileged()
    {
        if (!m_wasRoot)
            return;
        (void)::seteuid(0); // allowed: the saved id is root's
        (void)::setresuid(0, 0, 0);
        (void)::setresgid(m_gid, m_gid, m_gid);
    }
    Unprivileged(const Unprivileged&) = delete;
    Unprivileged& operator=(const Unprivileged&) = delete;
    // False when root could not give up its rights (no CAP_SETUID): file permissions mean nothing.
    bool ok() const { return m_ok; }

private:
    bool m_wasRoot;
    gid_t m_gid;
    bool m_ok;
};

} // namespace gapscope::test
