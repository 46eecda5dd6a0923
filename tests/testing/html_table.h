// The tables of the job page (roles/job/job_page.cc) as a browser's DOM
// holds them: `<div id="ID"><table><tr><th>…</th>…</tr><tr><td>…</td>…</tr>
// …</table>`, the cells' text already escaped. For the tests that read the
// page's DOM from headless Chromium.
#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

namespace edl::testing {

// One row of a table: the column's heading → the cell's text.
using HtmlRow = std::map<std::string, std::string>;

// The headings of the table in <div id="`id`">, in order; empty when there
// is no such table.
inline std::vector<std::string> HtmlTableHeadings(const std::string& dom, const std::string& id) {
  const size_t begin = dom.find("<div id=\"" + id + "\">");
  if (begin == std::string::npos) return {};
  const size_t end = dom.find("</tr>", begin);
  if (end == std::string::npos) return {};
  const std::string head = dom.substr(begin, end - begin);
  std::vector<std::string> out;
  const std::regex th("<th>(.*?)</th>");
  for (auto h = std::sregex_iterator(head.begin(), head.end(), th); h != std::sregex_iterator();
       ++h) {
    out.push_back((*h)[1]);
  }
  return out;
}

// The rows of the table in <div id="`id`"> below its headings; empty when
// there is no such table (the page shows "none" for an empty list).
inline std::vector<HtmlRow> HtmlTableRows(const std::string& dom, const std::string& id) {
  std::vector<HtmlRow> rows;
  const size_t begin = dom.find("<div id=\"" + id + "\">");
  if (begin == std::string::npos) return rows;
  const size_t end = dom.find("</table>", begin);
  if (end == std::string::npos) return rows;
  const std::string table = dom.substr(begin, end - begin);
  const std::regex row("<tr>(.*?)</tr>"), cell("<t[hd]>(.*?)</t[hd]>");
  std::vector<std::string> headings;
  for (auto r = std::sregex_iterator(table.begin(), table.end(), row); r != std::sregex_iterator();
       ++r) {
    const std::string text = (*r)[1];
    std::vector<std::string> cells;
    for (auto c = std::sregex_iterator(text.begin(), text.end(), cell); c != std::sregex_iterator();
         ++c) {
      cells.push_back((*c)[1]);
    }
    if (headings.empty()) {
      headings = cells;
      continue;
    }
    HtmlRow values;
    for (size_t i = 0; i < cells.size() && i < headings.size(); ++i) values[headings[i]] = cells[i];
    rows.push_back(values);
  }
  return rows;
}

// The cell of `row` under `heading`, or "(no such column)".
inline std::string HtmlCell(const HtmlRow& row, const std::string& heading) {
  auto it = row.find(heading);
  return it == row.end() ? "(no such column)" : it->second;
}

}  // namespace edl::testing
