// SPDX-License-Identifier: MIT
#pragma once

// Text for XML and HTML (the JUnit and HTML reports): &, <, > and " as entities, so that it is safe both
// as element text and inside a double-quoted attribute; control characters other than newline and tab,
// which XML 1.0 does not allow, as spaces. Pure; thread-safe.

#include <string>
#include <string_view>

namespace gapscope::model {

std::string markupEscaped(std::string_view text);

} // namespace gapscope::model
