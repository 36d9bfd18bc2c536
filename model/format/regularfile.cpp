// SPDX-License-Identifier: MIT
#include "model/format/regularfile.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::format {

Status checkRegularFile(const std::string& path)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return Status::error(path + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        return Status::error(path + ": is a directory, not a trace file");
    if (!S_ISREG(st.st_mode)) {
        const char* kind = S_ISFIFO(st.st_mode)          ? "a FIFO"
            : S_ISSOCK(st.st_mode)                       ? "a socket"
            : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                         : "a special file";
        return Status::error(path + ": is " + kind + ", not a regular trace file");
    }
    if (::access(path.c_str(), R_OK) != 0)
        return Status::error(path + ": " + std::strerror(errno));
    return Status::ok();
}

} // namespace gapscope::format
