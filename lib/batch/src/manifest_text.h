// The manifest's text from its lines: shared by Manifest::to_json and ResumeLog's saves.
#pragma once

#include <string>

#include "depthmask/manifest.h"

namespace depthmask::detail {

// head, then "\n" + first frame line, ",\n" + each next one, the middle, the failure lines alike, then
// the tail, into `text` (cleared first).
template <class Lines>
void join_manifest(std::string& text, const std::string& head, const Lines& frames, const Lines& failures) {
  text.clear();
  text += head;
  for (const Lines* lines : {&frames, &failures}) {
    if (lines == &failures) text += Manifest::middle_text();
    bool first = true;
    for (const auto& [key, line] : *lines) {
      text += first ? "\n" : ",\n";
      text += line;
      first = false;
    }
  }
  text += Manifest::tail_text();
}

}  // namespace depthmask::detail
