#!/usr/bin/env bash
# Self-test of scripts/check-sizes.sh: fixtures written to a scratch directory, and the
# checker's exact output and exit status compared with what they must give.
#
#   bash tests/structure/check_sizes_test.sh [path/to/check-sizes.sh]
set -euo pipefail

checker=${1:-"$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-sizes.sh"}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# `count` statements, one a line, as a function body's filler.
pad() {
  local line
  for ((line = 0; line < $1; line++)); do echo "  total += $line;"; done
}

# The line of the first occurrence of `text` in `file`.
line_of() { grep -n -F -- "$2" "$1" | head -1 | cut -d: -f1; }

# Runs the checker with the given arguments and compares its output and status.
expect() {
  local description=$1 expected_output=$2 expected_status=$3
  shift 3
  local output status=0
  output=$(bash "$checker" "$@" 2>&1) || status=$?
  if [[ $output != "$expected_output" || $status != "$expected_status" ]]; then
    echo "FAIL: $description"
    echo "  expected (status $expected_status):"
    printf '%s\n' "$expected_output" | sed 's/^/    /'
    echo "  got (status $status):"
    printf '%s\n' "$output" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: $description"
  fi
}

# 1. The limit itself passes, one line more is reported, with the function's name and length.
mkdir "$scratch/limit"
{
  echo "// 100 lines is the limit itself."
  echo "int exactlyAtTheLimit(int total) {"
  pad 97
  echo "  return total;"
  echo "}"
  echo "int oneTooMany(int total) {"
  pad 99
  echo "}"
} >"$scratch/limit/limit.cpp"
expect "a 101-line function is reported, a 100-line one is not" \
  "limit.cpp:$(line_of "$scratch/limit/limit.cpp" oneTooMany): function oneTooMany is 101 lines (limit 100)" \
  1 "$scratch/limit"

# 2. Braces inside literals, comments and preprocessor lines do not count: each function below
# is exactly 101 lines only if the scanner skips all of them.
mkdir "$scratch/literals"
tricky_body() {
  cat <<'EOF'
  const char* quoted = "{ \" }";
  const char* escapedBackslash = "\\";  // the string ends at its second quote: }
  const char* apostrophe = "it's {";
  char closing = '}';
  char opening = '{';
  char quote = '"';
  char escapedQuote = '\''; {  // the literal ends at its third quote
    total += escapedQuote;
  }
  char32_t wide = U'}';
  // } a line comment
  /* { a block comment
     spanning lines } } */
  const char* raw = R"delim(
} )" { " still inside the raw string
)delim";
  const char* prefixedRaw = u8R"(})";
  const char* notAComment = "// {";
  const char* notACommentEither = "/* {";
  long separated = 1'000'000 + 0xFF'FF'FF; {  // a separator is no character literal
    total += separated;
  }
#define OPEN_BRACE {
#define BEGIN_HARVEST \
  namespace harvest {
EOF
}
tricky_lines=$(tricky_body | wc -l)
{
  echo "namespace harvest {"
  echo "int literalsAndComments(int total) {"
  tricky_body
  pad $((99 - tricky_lines))
  echo "}"
  echo "int afterTheLiterals(int total) {"
  pad 99
  echo "}"
  echo "}  // namespace harvest"
} >"$scratch/literals/literals.cpp"
file=$scratch/literals/literals.cpp
expect "braces in strings, characters, raw strings, comments and directives are skipped" \
  "literals.cpp:$(line_of "$file" literalsAndComments): function literalsAndComments is 101 lines (limit 100)
literals.cpp:$(line_of "$file" afterTheLiterals): function afterTheLiterals is 101 lines (limit 100)" \
  1 "$scratch/literals"

# 3. A class with member functions defined inline: a constructor with a braced member
# initializer, an operator, a short one-liner, a data member with a braced initializer; then a
# destructor and a template member defined out of the class, and a trailing return type.
mkdir "$scratch/classes"
file=$scratch/classes/widget.h
{
  echo "#include <vector>"
  echo "namespace harvest {"
  echo "template <typename T>"
  echo "class Widget final : public Base<decltype(sizeof(T))> {"
  echo " public:"
  echo "  explicit Widget(int first) : first_{first}, second_(first), cells_{1, 2} {"
  pad 99
  echo "  }"
  echo "  ~Widget();"
  echo "  int first() const { return first_; }"
  echo "  bool operator==(const Widget& other) const {"
  pad 99
  echo "  }"
  echo "  std::vector<int> render() const {"
  pad 98
  echo "  }"
  echo "  std::vector<T> items() const;"
  echo ""
  echo " private:"
  echo "  struct Cell {"
  echo "    int size() const {"
  pad 99
  echo "    }"
  echo "  };"
  echo "  int first_;"
  echo "  int second_ = 0;"
  echo "  std::vector<int> cells_{3, 4};"
  echo "};"
  echo ""
  echo "template <typename T>"
  echo "Widget<T>::~Widget() {"
  pad 99
  echo "}"
  echo "template <typename T>"
  echo "std::vector<T> Widget<T>::items() const {"
  pad 99
  echo "}"
  echo "inline auto makeWidget(int first) -> Widget<int> {"
  pad 99
  echo "}"
  echo "}  // namespace harvest"
  echo "extern \"C\" {"
  echo "int harvest_entry(int total) {"
  pad 99
  echo "}"
  echo "}"
} >"$file"
expect "a class with inline member functions, and members defined out of it" \
  "widget.h:$(line_of "$file" "explicit Widget("): function Widget is 101 lines (limit 100)
widget.h:$(line_of "$file" "bool operator=="): function operator== is 101 lines (limit 100)
widget.h:$(line_of "$file" "int size()"): function size is 101 lines (limit 100)
widget.h:$(line_of "$file" "Widget<T>::~Widget"): function Widget<T>::~Widget is 101 lines (limit 100)
widget.h:$(line_of "$file" "Widget<T>::items"): function Widget<T>::items is 101 lines (limit 100)
widget.h:$(line_of "$file" makeWidget): function makeWidget is 101 lines (limit 100)
widget.h:$(line_of "$file" harvest_entry): function harvest_entry is 101 lines (limit 100)" \
  1 --only functions "$scratch/classes"

# 4. Lambdas and local classes count towards their enclosing function only (a lambda in a
# constructor's initializer list towards the constructor); a lambda at namespace scope is a
# function of its own, named after the variable that holds it or the call it is passed to.
# Braced arguments and default arguments are no functions.
mkdir "$scratch/lambdas"
file=$scratch/lambdas/lambdas.cpp
{
  echo "int withLongLambda(int total) {"
  echo "  auto step = [&](int by) {"
  pad 99
  echo "  };"
  echo "  struct Local {"
  echo "    int twice(int x) { return 2 * x; }"
  echo "  };"
  echo "  return step(Local{}.twice(1));"
  echo "}"
  echo "const auto kStep = [](int total) -> int {"
  pad 99
  echo "};"
  echo "const bool kRegistered = registerHandler(\"{\", [](int total) mutable {"
  pad 99
  echo "});"
  echo "REGISTER_HANDLER([](int total) -> int {"
  pad 99
  echo "});"
  echo "void withDefaults(Options options = {}, std::vector<int> sizes = {1, 2}) {"
  pad 99
  echo "}"
  echo "BENCHMARK(BM_Allocate)"
  echo "    ->ArgNames({\"agents\", \"frameworks\"})"
  echo "    ->ArgsProduct({"
  for ((agents = 0; agents < 100; agents++)); do echo "        {$agents, 1},"; done
  echo "    });"
  echo "struct Visitor {"
  echo "  explicit Visitor(int total)"
  echo "      : call_([](int x) -> bool {"
  echo "          return x > 0;"
  echo "        }) {"
  pad 99
  echo "  }"
  echo "};"
} >"$file"
expect "lambdas and local classes belong to their function; a namespace-scope lambda is one" \
  "lambdas.cpp:1: function withLongLambda is 107 lines (limit 100)
lambdas.cpp:$(line_of "$file" kStep): function kStep is 101 lines (limit 100)
lambdas.cpp:$(line_of "$file" kRegistered): function kRegistered is 101 lines (limit 100)
lambdas.cpp:$(line_of "$file" REGISTER_HANDLER): function REGISTER_HANDLER is 101 lines (limit 100)
lambdas.cpp:$(line_of "$file" withDefaults): function withDefaults is 101 lines (limit 100)
lambdas.cpp:$(line_of "$file" "explicit Visitor"): function Visitor is 101 lines (limit 100)" \
  1 "$scratch/lambdas"

# 5. Operators, conversions and names behind decltype(auto) are named as written.
mkdir "$scratch/names"
file=$scratch/names/names.h
cat >"$file" <<'EOF'
struct Id {
  explicit operator uint32_t() const {
    return value;
  }
  void* operator new(std::size_t size) {
    return ::operator new(size);
  }
  bool operator()(int x) const {
    return x > 0;
  }
  friend std::ostream& operator<<(std::ostream& out, const Id& id) {
    return out << id.value;
  }
  uint32_t value;
};
template <>
struct std::hash<Id> {
  std::size_t operator()(const Id& id) const noexcept {
    return id.value;
  }
};
decltype(auto) unwrap(Id id) {
  return id.value;
}
EOF
expect "operators and conversions are named as written" \
  "names.h:2: function operator uint32_t is 3 lines (limit 2)
names.h:5: function operator new is 3 lines (limit 2)
names.h:8: function operator() is 3 lines (limit 2)
names.h:11: function operator<< is 3 lines (limit 2)
names.h:18: function operator() is 3 lines (limit 2)
names.h:22: function unwrap is 3 lines (limit 2)" \
  1 --max-function-lines 2 "$scratch/names"

# 6. File lengths: 800 lines pass, 801 are reported; --only keeps to one rule.
mkdir "$scratch/files"
{
  echo "int longFunctionInALongFile(int total) {"
  pad 798
  echo "}"
} >"$scratch/files/eight_hundred.cpp"
{
  cat "$scratch/files/eight_hundred.cpp"
  echo "// one line too many"
} >"$scratch/files/eight_hundred_one.h"
expect "a file of 801 lines is reported, one of 800 is not" \
  "eight_hundred_one.h: 801 lines (limit 800)" 1 --only files "$scratch/files"
expect "--only functions leaves file lengths alone" \
  "eight_hundred.cpp:1: function longFunctionInALongFile is 800 lines (limit 100)
eight_hundred_one.h:1: function longFunctionInALongFile is 800 lines (limit 100)" \
  1 --only functions "$scratch/files"

# 7. The limits are options.
expect "--max-file-lines and --max-function-lines set the limits" \
  "limit.cpp:$(line_of "$scratch/limit/limit.cpp" exactlyAtTheLimit): function exactlyAtTheLimit is 100 lines (limit 99)
limit.cpp:$(line_of "$scratch/limit/limit.cpp" oneTooMany): function oneTooMany is 101 lines (limit 99)
limit.cpp: 202 lines (limit 201)" \
  1 --max-file-lines 201 --max-function-lines 99 "$scratch/limit"
expect "a file given by path is checked as given" \
  "$scratch/limit/limit.cpp:$(line_of "$scratch/limit/limit.cpp" oneTooMany): function oneTooMany is 101 lines (limit 100)" \
  1 "$scratch/limit/limit.cpp"

# 8. Tests, build trees, dependencies and generated protobuf code are left out; C++ templates
# (.cpp.in) are not; a tree without violations passes silently.
mkdir -p "$scratch/tree"/{tests/unit,build-debug,node_modules/dep,protos,sim}
for excluded in tests/unit/long_test.cpp build-debug/generated.cpp node_modules/dep/dep.h \
  protos/harvest.pb.cc protos/harvest.pb.h; do
  cp "$scratch/limit/limit.cpp" "$scratch/tree/$excluded"
done
cp "$scratch/limit/limit.cpp" "$scratch/tree/sim/builtin.cpp.in"
cp "$scratch/limit/limit.cpp" "$scratch/tree/sim/notes.txt"
expect "tests, builds, node_modules and .pb files are skipped, .cpp.in is checked" \
  "sim/builtin.cpp.in:$(line_of "$scratch/limit/limit.cpp" oneTooMany): function oneTooMany is 101 lines (limit 100)" \
  1 "$scratch/tree"
rm "$scratch/tree/sim/builtin.cpp.in"
expect "a tree without violations passes silently" "" 0 "$scratch/tree"
expect "an unknown option is a usage error" "$(sed -n '2,6p' "$checker" | sed 's/^# \{0,1\}//')" \
  2 --max-lines 3 "$scratch/tree"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
