#!/usr/bin/env bash
# The size rule of the code outside tests: no C++ file over 800 lines, no function over 100.
#
#   bash scripts/check-sizes.sh [--max-file-lines N] [--max-function-lines N]
#                               [--only files|functions] [PATH...]
#
# A PATH that is a directory is walked for C++ sources (*.h, *.hh, *.hpp, *.cpp, *.cc, *.cxx
# and the C++ templates *.h.in, *.cpp.in), leaving out its tests/, build*/, out/, .git/,
# .cache/, any node_modules/ or third_party/, and generated protobuf code (*.pb.h, *.pb.cc);
# paths are printed relative to it. A PATH that is a file is checked as given. Without PATH,
# the repository holding this script is checked. --only checks one of the two rules alone.
#
# One line per violation, and exit status 1 if there is any (0 if none, 2 on a usage error):
#   path: N lines (limit 800)
#   path:LINE: function NAME is N lines (limit 100)
#
# A file's length is its number of lines. A function's length is counted from the line of its
# opening brace to the line of its closing brace, both included (so `void f() {`, 99 lines,
# `}` is 101 lines, and a constructor's member initializers are not counted); LINE is the line
# of its name. Functions are the bodies defined at namespace or class scope: free functions,
# member functions defined in or out of their class, and lambdas at namespace scope (held by a
# variable, named after it, or passed to a call). Everything inside a body (lambdas, local
# classes) counts towards that body only.
#
# The scan is lexical, not a compiler's: it follows brace depth while skipping comments,
# string, character and raw string literals, digit separators and preprocessor lines, and
# tells a function body from a namespace, a class or a braced initializer by the declaration
# in front of the brace. Not seen as functions: lambdas inside a braced initializer at
# namespace scope or in a default member initializer, and bodies whose braces differ between
# #if branches.
set -euo pipefail

max_file_lines=800
max_function_lines=100
only=both
roots=()

usage() {
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit "$1"
}

while (($# > 0)); do
  case $1 in
    --max-file-lines | --max-function-lines)
      [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage 2 >&2
      if [[ $1 == --max-file-lines ]]; then max_file_lines=$2; else max_function_lines=$2; fi
      shift 2
      ;;
    --only)
      [[ $# -ge 2 && $2 =~ ^(files|functions)$ ]] || usage 2 >&2
      only=$2
      shift 2
      ;;
    -h | --help) usage 0 ;;
    -*) usage 2 >&2 ;;
    *)
      roots+=("$1")
      shift
      ;;
  esac
done
((${#roots[@]} > 0)) || roots=("$(cd "$(dirname "$0")/.." && pwd)")

check_files=1
check_functions=1
[[ $only == functions ]] && check_files=0
[[ $only == files ]] && check_functions=0

# The scanner. Per file it keeps a stack of brace kinds: "top", "ns" (namespace or extern "C"),
# "class", "func" (a function body), "inner" (any brace inside a body) and "init" (a braced
# initializer or a brace inside one). Outside bodies and initializers it gathers the
# declaration text since the last `;`, `{` or `}` (comments dropped, literals emptied,
# whitespace collapsed), which decides what the next `{` opens.
read -r -d '' scanner <<'AWK' || true
FNR == 1 {
  if (NR > 1) endFile()
  startFile()
}
{
  lastLine = FNR
  scanLine($0)
}
END { if (NR > 0) endFile() }

function startFile() {
  path = FILENAME
  sub(/^\.\//, "", path)
  depth = 0
  kind[0] = "top"
  inBlockComment = 0
  inRawString = 0
  inDirective = 0
  resetHeader()
}

function endFile() {
  if (checkFiles && lastLine > maxFile) print path ": " lastLine " lines (limit " maxFile ")"
}

function resetHeader() {
  header = ""
  headerParens = 0
  headerLines = 0
}

function declaring() { return kind[depth] == "top" || kind[depth] == "ns" || kind[depth] == "class" }

# Appends declaration text, one space for any run of blanks; remembers where each line starts
# so that a name can be given its line.
function addHeader(text) {
  gsub(/[ \t]+/, " ", text)
  if (text == "") return
  if (substr(text, 1, 1) == " " && (header == "" || substr(header, length(header), 1) == " "))
    text = substr(text, 2)
  if (text == "") return
  if (headerLines == 0 || headerLineAt[headerLines] != FNR) {
    headerLines++
    headerLineAt[headerLines] = FNR
    headerLineStart[headerLines] = length(header) + 1
  }
  header = header text
}

function lineOfHeaderPosition(position,   k) {
  for (k = headerLines; k > 1; k--)
    if (headerLineStart[k] <= position) return headerLineAt[k]
  return headerLines > 0 ? headerLineAt[1] : FNR
}

function scanLine(line,   n, i, c, run, rest, p) {
  if (!inBlockComment && !inRawString && (inDirective || line ~ /^[ \t]*#/)) {
    inDirective = (line ~ /\\$/)
    return
  }
  if (declaring()) addHeader(" ")
  token = ""
  n = length(line)
  i = 1
  while (i <= n) {
    rest = substr(line, i)
    if (inBlockComment) {
      p = index(rest, "*/")
      if (p == 0) return
      inBlockComment = 0
      i += p + 1
      continue
    }
    if (inRawString) {
      p = index(rest, rawStringEnd)
      if (p == 0) return
      inRawString = 0
      literal("\"\"")
      i += p - 1 + length(rawStringEnd)
      continue
    }
    if (match(rest, /^[^{}()\/"';:]+/)) {
      run = substr(rest, 1, RLENGTH)
      if (token ~ /'$/ && run ~ /^[A-Za-z0-9_]+$/) token = token run
      else if (match(run, /[A-Za-z0-9_]+$/)) token = substr(run, RSTART)
      else token = ""
      if (declaring()) addHeader(run)
      i += length(run)
      continue
    }
    c = substr(rest, 1, 1)
    if (c == "/" && substr(rest, 2, 1) == "/") return
    if (c == "/" && substr(rest, 2, 1) == "*") {
      inBlockComment = 1
      if (declaring()) addHeader(" ")
      i += 2
      continue
    }
    if (c == "\"" && token ~ /^(u8|u|U|L)?R$/ && (p = index(rest, "(")) > 0) {
      rawStringEnd = ")" substr(rest, 2, p - 2) "\""
      inRawString = 1
      token = ""
      i += p
      continue
    }
    if (c == "\"") {
      i += skipQuoted(rest, "\"")
      literal("\"\"")
      continue
    }
    if (c == "'" && token !~ /^[0-9]/) {
      i += skipQuoted(rest, "'")
      literal("''")
      continue
    }
    if (c == "'") token = token c  # a digit separator, as in 1'000'000
    else token = ""
    if (declaring()) declare(c)
    else if (kind[depth] == "init") initializer(c)
    else body(c)
    i++
  }
}

# The length of the literal that opens `text` (up to its closing quote, or the line's end).
function skipQuoted(text, quote,   pattern) {
  pattern = quote == "\"" ? "^\"([^\"\\\\]|\\\\.)*\"" : "^'([^'\\\\]|\\\\.)*'"
  if (match(text, pattern)) return RLENGTH
  return length(text)
}

function literal(placeholder) {
  token = ""
  if (declaring()) addHeader(placeholder)
}

function body(c,   closing) {
  if (c == "{") {
    kind[++depth] = "inner"
  } else if (c == "}") {
    closing = kind[depth--]
    if (closing == "func") {
      functionEnded()
      resetHeader()
    }
  }
}

function initializer(c) {
  if (c == "{") kind[++depth] = "init"
  else if (c == "}") {
    depth--
    if (declaring()) addHeader("{}")
  }
}

function declare(c,   opened) {
  if (c == "{") {
    opened = classify()
    if (opened == "func") functionStarted()
    kind[++depth] = opened
    if (opened != "init") resetHeader()
  } else if (c == "}") {
    if (depth > 0) depth--
    resetHeader()
  } else if (c == ";" && headerParens == 0) {
    resetHeader()
  } else {
    if (c == "(") headerParens++
    if (c == ")" && headerParens > 0) headerParens--
    addHeader(c)
    if (c == ":" && header ~ /^ ?(public|protected|private) ?:$/) resetHeader()
  }
}

# What the `{` that ends the current declaration opens.
function classify(   start, first, text, last, word) {
  text = header
  sub(/ +$/, "", text)
  last = substr(text, length(text), 1)
  word = ""
  if (match(text, /[A-Za-z_][A-Za-z_0-9]*$/)) word = substr(text, RSTART)
  if (headerParens > 0) {
    # A lambda passed to a call at namespace scope has no enclosing function: it is one. In a
    # constructor's initializer list, it is part of the constructor.
    if (hasConstructorColon()) return "init"
    if (last == ")" || word ~ /^(mutable|noexcept|constexpr)$/) return "func"
    if (substr(text, lastIndexOf(text, ")")) ~ /^\) ?-> ?[^()]*$/) return "func"
    return "init"  # a default argument, or another braced argument
  }
  start = declarationStart()
  first = substr(header, start)
  if (match(first, /^[A-Za-z_][A-Za-z_0-9]*/)) first = substr(first, 1, RLENGTH)
  else first = ""
  if (first == "namespace" || substr(header, start) ~ /^inline namespace/) return "ns"
  if (first == "extern" && index(header, "(") == 0) return "ns"
  if (first ~ /^(class|struct|union|enum|typedef)$/) return "class"
  if (last == ")" || last == "&") return "func"
  if (word ~ /^(const|noexcept|override|final|mutable|volatile|try)$/) return "func"
  if (last == "}") return hasConstructorColon() ? "func" : "init"
  # A trailing return type; with a constructor's initializer list, a member initialized
  # with braces (no `->` can stand outside parentheses there).
  if ((word != "" || last == ">" || last == "*") && hasAfterParameters("->")) return "func"
  return "init"
}

function lastIndexOf(text, character,   p) {
  for (p = length(text); p > 0; p--)
    if (substr(text, p, 1) == character) return p
  return 0
}

# Where the declaration proper starts, past blanks, [[attributes]] and template <...> heads.
function declarationStart(   p, q) {
  p = 1
  while (1) {
    while (substr(header, p, 1) == " ") p++
    if (substr(header, p, 2) == "[[") {
      q = index(substr(header, p), "]]")
      if (q == 0) return p
      p += q + 1
    } else if (substr(header, p) ~ /^template ?</) {
      p = pastAngles(index(substr(header, p), "<") + p - 1)
    } else {
      return p
    }
  }
}

# The position after the `>` that closes the `<` at `open` (parentheses shield their content).
function pastAngles(open,   p, c, angles, parens) {
  angles = 0
  parens = 0
  for (p = open; p <= length(header); p++) {
    c = substr(header, p, 1)
    if (c == "(") parens++
    else if (c == ")") parens--
    else if (parens == 0 && c == "<") angles++
    else if (parens == 0 && c == ">" && substr(header, p - 1, 1) != "-") {
      if (--angles == 0) return p + 1
    }
  }
  return p
}

# Whether `mark` appears outside parentheses after the first top-level parameter list.
function hasAfterParameters(mark,   p, c, parens, closed) {
  parens = 0
  closed = 0
  for (p = 1; p <= length(header); p++) {
    c = substr(header, p, 1)
    if (c == "(") parens++
    else if (c == ")" && --parens == 0) closed = 1
    else if (closed && parens == 0 && substr(header, p, length(mark)) == mark) return 1
  }
  return 0
}

# A lone `:` after the parameters: a constructor's member initializer list.
function hasConstructorColon(   p, c, parens, closed) {
  parens = 0
  closed = 0
  for (p = 1; p <= length(header); p++) {
    c = substr(header, p, 1)
    if (c == "(") parens++
    else if (c == ")" && --parens == 0) closed = 1
    else if (closed && parens == 0 && c == ":" && substr(header, p - 1, 1) != ":" &&
             substr(header, p + 1, 1) != ":")
      return 1
  }
  return 0
}

function functionStarted(   where) {
  functionStartLine = FNR
  where = functionName()
  functionNameLine = lineOfHeaderPosition(where)
}

function functionEnded(   lines) {
  lines = FNR - functionStartLine + 1
  if (checkFunctions && lines > maxFunction)
    print path ":" functionNameLine ": function " name " is " lines " lines (limit " maxFunction ")"
}

# Sets `name` to the function's (qualified) name and returns its position in the header: the
# name before the first parameter list outside template arguments that does not follow a
# keyword, or an operator's, or for a lambda the variable it initializes.
function functionName(   p, c, parens, angles, before, op) {
  parens = 0
  angles = 0
  for (p = declarationStart(); p <= length(header); p++) {
    c = substr(header, p, 1)
    if (parens == 0 && substr(header, p) ~ /^operator[^A-Za-z_0-9]/ &&
        (p == 1 || substr(header, p - 1, 1) !~ /[A-Za-z_0-9]/)) {
      op = substr(header, p + 8)
      sub(/^ /, "", op)
      if (substr(op, 1, 2) == "()") op = "()"
      else if (match(op, /^[^(]*/)) op = substr(op, 1, RLENGTH)
      sub(/ +$/, "", op)
      if (op ~ /^[A-Za-z_]/) op = " " op  # operator new, a conversion operator
      return qualifiedNameEndingAt(p + 7, op)
    }
    if (c == "(") {
      if (parens++ == 0 && angles == 0) {
        before = p - 1
        while (substr(header, before, 1) == " ") before--
        if (qualifiedNameEndingAt(before, "") && name !~ /^(.*::)?(alignas|alignof|decltype|explicit|noexcept|requires|sizeof|static_assert|throw|__attribute__|__declspec)$/)
          return nameStart
      }
    } else if (c == ")") {
      parens--
    } else if (parens == 0 && c == "<") {
      angles++
    } else if (parens == 0 && c == ">" && substr(header, p - 1, 1) != "-" && angles > 0) {
      angles--
    } else if (parens == 0 && angles == 0 && c == "=" && substr(header, p + 1, 1) != "=") {
      before = p - 1
      while (substr(header, before, 1) == " ") before--
      if (qualifiedNameEndingAt(before, "")) return nameStart
    }
  }
  name = "(unnamed)"
  return 1
}

# Sets `name` (and `nameStart`) to the qualified name whose last character is at `end`,
# followed by `suffix`, and returns whether there is one: identifiers joined by `::`, each
# maybe with template arguments, and destructors' `~`.
function qualifiedNameEndingAt(end, suffix,   p, angles, c) {
  p = end
  while (1) {
    if (substr(header, p, 1) == ">") {
      angles = 0
      for (; p > 0; p--) {
        c = substr(header, p, 1)
        if (c == ">") angles++
        else if (c == "<" && --angles == 0) break
      }
      p--
    }
    while (p > 0 && substr(header, p, 1) ~ /[A-Za-z_0-9~]/) p--
    if (p >= 2 && substr(header, p - 1, 2) == "::") p -= 2
    else break
  }
  nameStart = p + 1
  name = substr(header, nameStart, end - p)
  gsub(/ /, "", name)
  name = name suffix
  return name ~ /[A-Za-z_]/
}
AWK

status=0
for root in "${roots[@]}"; do
  if [[ -d $root ]]; then
    mapfile -t files < <(cd "$root" && find . \
      \( -path ./tests -o -path './build*' -o -path ./out -o -path ./.git -o -path ./.cache \
      -o -name node_modules -o -name third_party \) -prune -o -type f \
      \( -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' \
      -o -name '*.cxx' -o -name '*.h.in' -o -name '*.cpp.in' \) \
      ! -name '*.pb.h' ! -name '*.pb.cc' -print | LC_ALL=C sort)
    dir=$root
  elif [[ -f $root ]]; then
    files=("$root")
    dir=.
  else
    echo "check-sizes: no such file or directory: $root" >&2
    exit 2
  fi
  ((${#files[@]} > 0)) || continue
  report=$(cd "$dir" && awk -v maxFile="$max_file_lines" -v maxFunction="$max_function_lines" \
    -v checkFiles="$check_files" -v checkFunctions="$check_functions" "$scanner" "${files[@]}")
  if [[ -n $report ]]; then
    printf '%s\n' "$report"
    status=1
  fi
done
exit "$status"
