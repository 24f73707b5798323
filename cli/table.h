// Table: rows printed as aligned columns for people, the way `mesos` and `kubectl` print lists:
// a header in capitals, two spaces between columns, no borders, nothing padded after the last
// column (so that lines compare exactly and grep cleanly).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace harvest::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}

  // Short rows are padded with empty cells.
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// A number as people read it: integers without a fraction, others to three decimals at most.
std::string formatNumber(double value);

}  // namespace harvest::cli
