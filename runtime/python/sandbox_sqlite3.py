"""The sandbox's `sqlite3`: the SQLite command-line shell, as Debian 12's
sqlite3 3.40 behaves when it is not on a terminal (agents pipe SQL into it
or pass it as arguments), on top of python's own sqlite3 module, so it
reads and writes the same files `import sqlite3` does.

Reached as the shell utility `sqlite3` (`python3 -m sandbox_sqlite3`).
What it keeps from the real shell, because scripts parse it: the output
modes and their exact layout, the error lines and exit statuses, the
dot-commands scripts use (.tables, .schema, .dump, .import, .mode,
.headers, .read, .output, ...). What it leaves out has no use without a
terminal or a network: line editing, .archive, .excel, .clone, extensions.
"""

import csv
import io
import json
import os
import re
import sqlite3
import sys

USAGE = """Usage: sqlite3 [OPTIONS] FILENAME [SQL]
FILENAME is the name of an SQLite database. A new database is created
if the file does not previously exist.
OPTIONS include:
   -ascii               set output mode to 'ascii'
   -bail                stop after hitting an error
   -batch               force batch I/O
   -box                 set output mode to 'box'
   -column              set output mode to 'column'
   -cmd COMMAND         run "COMMAND" before reading stdin
   -csv                 set output mode to 'csv'
   -echo                print inputs before execution
   -init FILENAME       read/process named file
   -[no]header          turn headers on or off
   -help                show this message
   -html                set output mode to HTML
   -json                set output mode to 'json'
   -line                set output mode to 'line'
   -list                set output mode to 'list'
   -markdown            set output mode to 'markdown'
   -newline SEP         set output row separator. Default: '\\n'
   -nullvalue TEXT      set text string for NULL values. Default ''
   -quote               set output mode to 'quote'
   -readonly            open the database read-only
   -separator SEP       set output column separator. Default: '|'
   -table               set output mode to 'table'
   -tabs                set output mode to 'tabs'
   -version             show SQLite version
"""

MODES = ("ascii", "box", "column", "csv", "html", "insert", "json", "line", "list",
         "markdown", "qbox", "quote", "table", "tabs", "tcl")
# Modes that always print their header row, as 3.40 does.
HEADED = ("box", "table", "markdown", "qbox")
OPTION_MODES = ("ascii", "box", "column", "csv", "html", "json", "line", "list",
                "markdown", "quote", "table", "tabs")
VALUE_OPTIONS = ("separator", "newline", "nullvalue", "cmd", "init", "vfs", "mmap",
                 "pagecache", "lookaside", "heap", "maxsize")
BOX = ("┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘", "─", "│")
TABLE = ("+", "+", "+", "+", "+", "+", "+", "+", "+", "-", "|")


class Quit(Exception):
    def __init__(self, code):
        self.code = code


class ShellError(Exception):
    """An error the shell reports in one line and goes on from."""


class Shell:
    def __init__(self):
        self.db = None
        self.path = ":memory:"
        self.readonly = False
        self.mode = "list"
        self.insert_table = '"table"'
        self.headers = False
        self.col_sep = "|"
        self.row_sep = "\n"
        self.null = ""
        self.bail = False
        self.echo = False
        self.widths = []
        self.out = sys.stdout
        self.out_count = 0
        self.failed = False
        self.fmt = sqlite3.connect(":memory:")

    # ---- the database ----

    def open(self, path):
        self.path = path
        uri = None
        if self.readonly and path != ":memory:":
            uri = "file:%s?mode=ro" % path
        try:
            if uri:
                db = sqlite3.connect(uri, uri=True, isolation_level=None)
            else:
                db = sqlite3.connect(path, isolation_level=None)
            db.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
            # sqlite3 opens lazily; make a missing folder fail here as the
            # real shell does, not at the first statement.
            try:
                db.execute("PRAGMA schema_version").fetchall()
            except sqlite3.DatabaseError as e:
                # A file that is not a database opens; its statements fail.
                if "unable to open" in str(e):
                    raise
        except sqlite3.Error:
            raise ShellError('unable to open database "%s": unable to open database file' % path)
        self.db = db

    # ---- values as text ----

    def real(self, value, digits):
        return self.fmt.execute("SELECT printf('%%!.%dg', ?)" % digits, (value,)).fetchone()[0]

    def text(self, value):
        """A value as sqlite3_column_text gives it (list-like modes)."""
        if value is None:
            return None
        if isinstance(value, float):
            return self.real(value, 15)
        if isinstance(value, bytes):
            # Printed as C text: up to the first NUL.
            return value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        return str(value)

    def quoted(self, value):
        """A value as an SQL literal (quote, insert, .dump)."""
        if value is None:
            return "NULL"
        if isinstance(value, bool) or isinstance(value, int):
            return str(int(value))
        if isinstance(value, float):
            return self.real(value, 20)
        if isinstance(value, bytes):
            return "X'%s'" % value.hex()
        return "'%s'" % value.replace("'", "''")

    # ---- output ----

    def write(self, text):
        self.out.write(text)

    def show(self, names, rows):
        mode = self.mode
        if mode in ("column", "box", "table", "markdown", "qbox"):
            return self.show_grid(names, rows)
        if mode == "json":
            return self.show_json(names, rows)
        if mode == "line":
            return self.show_line(names, rows)
        if mode == "html":
            return self.show_html(names, rows)
        if mode in ("quote", "insert"):
            return self.show_literals(names, rows)
        self.show_delimited(names, rows)

    def cell(self, value):
        text = self.text(value)
        return self.null if text is None else text

    def show_delimited(self, names, rows):
        csv_mode = self.mode == "csv"
        tcl = self.mode == "tcl"

        def field(text):
            if csv_mode:
                return csv_field(text, self.col_sep)
            if tcl:
                return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')
            return text

        if self.headers and rows:
            self.write(self.col_sep.join(field(n) for n in names) + self.row_sep)
        for row in rows:
            cells = []
            for v in row:
                if v is None and csv_mode:
                    cells.append(self.null)
                else:
                    cells.append(field(self.cell(v)))
            self.write(self.col_sep.join(cells) + self.row_sep)

    def show_literals(self, names, rows):
        if self.mode == "insert":
            cols = ""
            if self.headers:
                cols = "(%s)" % ",".join(quote_ident(n) for n in names)
            for row in rows:
                values = ",".join(self.quoted(v) for v in row)
                self.write("INSERT INTO %s%s VALUES(%s);\n" % (self.insert_table, cols, values))
            return
        if self.headers and rows:
            self.write(",".join(self.quoted(n) for n in names) + self.row_sep)
        for row in rows:
            self.write(",".join(self.quoted(v) for v in row) + self.row_sep)

    def show_json(self, names, rows):
        for i, row in enumerate(rows):
            self.write("[{" if i == 0 else ",\n{")
            parts = []
            for name, v in zip(names, row):
                if v is None:
                    value = "null"
                elif isinstance(v, bool) or isinstance(v, int):
                    value = str(int(v))
                elif isinstance(v, float):
                    value = self.real(v, 20)
                else:
                    value = json_string(self.text(v))
                parts.append("%s:%s" % (json_string(name), value))
            self.write(",".join(parts) + "}")
        if rows:
            self.write("]\n")

    def show_line(self, names, rows):
        # The real shell pads names to 5 at least.
        width = max([5] + [len(n) for n in names])
        for i, row in enumerate(rows):
            if i > 0:
                self.write(self.row_sep)
            for name, v in zip(names, row):
                self.write("%*s = %s%s" % (width, name, self.cell(v), self.row_sep))

    def show_html(self, names, rows):
        if self.headers and rows:
            self.write("<TR>" + "".join("<TH>%s</TH>\n" % html(n) for n in names) + "</TR>\n")
        for row in rows:
            self.write("<TR>" + "".join("<TD>%s</TD>\n" % html(self.cell(v)) for v in row)
                       + "</TR>\n")

    def show_grid(self, names, rows):
        mode = self.mode
        if mode == "qbox":
            cells = [[self.quoted(v) for v in row] for row in rows]
        else:
            cells = [[self.cell(v) for v in row] for row in rows]
        headed = mode in HEADED or self.headers
        widths = []
        for i, name in enumerate(names):
            fixed = self.widths[i] if i < len(self.widths) else 0
            if fixed:
                widths.append(abs(fixed))
                continue
            w = len(name) if headed or mode != "column" else 0
            for row in cells:
                w = max(w, len(row[i]))
            if mode == "column" and not headed:
                w = max(w, len(name))
            widths.append(w)
        if not rows:
            return
        if mode == "column":
            return self.show_columns(names, cells, widths, headed)
        if mode == "markdown":
            self.write(grid_row(names, widths, "|", "|", "|", center=True))
            self.write("|" + "|".join("-" * (w + 2) for w in widths) + "|\n")
            for row in cells:
                self.write(grid_row(row, widths, "|", "|", "|"))
            return
        b = BOX if mode in ("box", "qbox") else TABLE
        self.write(grid_rule(widths, b[0], b[1], b[2], b[9]))
        self.write(grid_row(names, widths, b[10], b[10], b[10], center=True))
        self.write(grid_rule(widths, b[3], b[4], b[5], b[9]))
        for row in cells:
            self.write(grid_row(row, widths, b[10], b[10], b[10]))
        self.write(grid_rule(widths, b[6], b[7], b[8], b[9]))

    def show_columns(self, names, cells, widths, headed):
        fixed = [self.widths[i] if i < len(self.widths) else 0 for i in range(len(widths))]

        def lines(values):
            """One row as printed lines: a value wider than its set width
            wraps onto the next lines, as 3.40 does."""
            chunks = [wrap(v, widths[i]) if fixed[i] else [v] for i, v in enumerate(values)]
            out = []
            for k in range(max(len(c) for c in chunks)):
                parts = []
                for i, c in enumerate(chunks):
                    v = c[k] if k < len(c) else ""
                    parts.append(v.rjust(widths[i]) if fixed[i] < 0 else v.ljust(widths[i]))
                out.append("  ".join(parts) + self.row_sep)
            return out

        if headed:
            self.write("".join(lines(names)))
            self.write("".join(lines(["-" * w for w in widths])))
        printed = [lines(row) for row in cells]
        # Once a row takes several lines, a blank line parts every row.
        parted = any(len(p) > 1 for p in printed)
        for n, row_lines in enumerate(printed):
            self.write("".join(row_lines))
            if parted and n + 1 < len(printed):
                self.write(self.row_sep)

    # ---- SQL ----

    def execute(self, sql, line_no, from_args):
        """Runs every statement of `sql`; False if one failed."""
        for stmt, offset_line, tail in split_statements(sql):
            if self.echo and not from_args:
                self.write(stmt + "\n")
            try:
                self.run_statement(stmt)
            except sqlite3.Error as e:
                self.report_sql_error(e, tail, line_no + offset_line, from_args)
                return False
        return True

    def run_statement(self, stmt):
        if self.db is None:
            self.open(self.path)
        cur = self.db.execute(stmt)
        if cur.description is None:
            return
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
        if names == ["id", "parent", "notused", "detail"] and EQP.match(stmt):
            return self.show_query_plan(rows)
        self.show(names, rows)

    def show_query_plan(self, rows):
        """EXPLAIN QUERY PLAN as the shell draws it, a tree in any mode."""
        children = {}
        for node, parent, _, detail in rows:
            children.setdefault(parent, []).append((node, detail))
        out = ["QUERY PLAN\n"]

        def draw(parent, prefix):
            kids = children.get(parent, [])
            for k, (node, detail) in enumerate(kids):
                last = k + 1 == len(kids)
                out.append("%s%s%s\n" % (prefix, "`--" if last else "|--", detail))
                draw(node, prefix + ("   " if last else "|  "))

        draw(0, "")
        self.write("".join(out))

    def report_sql_error(self, e, stmt, line_no, from_args):
        code = getattr(e, "sqlite_errorcode", 1) & 0xFF
        message = str(e)
        in_prepare = code == 1
        if from_args:
            head = "Error: in prepare, %s" % message if in_prepare else \
                "Error: stepping, %s (%d)" % (message, code)
        else:
            kind = "Parse error" if in_prepare else "Runtime error"
            suffix = "" if in_prepare else " (%d)" % code
            head = "%s near line %d: %s%s" % (kind, line_no, message, suffix)
        lines = [head]
        context = error_context(message, stmt)
        if context:
            lines.extend(context)
        sys.stdout.flush()
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
        self.failed = True
        self.status = code if not in_prepare else 1

    # ---- dot-commands ----

    def dot(self, line):
        args = split_dot_args(line[1:])
        if not args:
            return True
        name = args[0]
        handler = getattr(self, "dot_" + DOT_ALIASES.get(name, name), None)
        if handler is None:
            raise ShellError('unknown command or invalid arguments:  "%s". Enter ".help" for help'
                             % name)
        result = handler(args[1:])
        # `.once` counts 2 and outlives its own dot-command only.
        if self.out_count:
            self.out_count -= 1
            if not self.out_count:
                self.close_output()
        return result is not False

    def dot_quit(self, args):
        raise Quit(int(args[0]) if args and args[0].lstrip("-").isdigit() else 0)

    def dot_bail(self, args):
        self.bail = on_off(args, ".bail on|off")

    def dot_echo(self, args):
        self.echo = on_off(args, ".echo on|off")

    def dot_headers(self, args):
        self.headers = on_off(args, ".headers on|off")

    def dot_nullvalue(self, args):
        if len(args) != 1:
            raise Usage(".nullvalue STRING")
        self.null = args[0]

    def dot_separator(self, args):
        if not 1 <= len(args) <= 2:
            raise Usage(".separator COL ?ROW?")
        self.col_sep = unescape(args[0])
        if len(args) == 2:
            self.row_sep = unescape(args[1])

    def dot_width(self, args):
        self.widths = [atoi(a) for a in args]

    def dot_mode(self, args):
        if not args:
            self.write("current output mode: %s\n" % self.mode)
            return
        mode = args[0]
        if mode not in MODES:
            raise ShellError("mode should be one of: " + " ".join(MODES))
        self.mode = mode
        if mode == "csv":
            # `.mode csv` ends rows with CRLF (RFC 4180); the -csv option
            # keeps LF, as 3.40 does.
            self.col_sep, self.row_sep = ",", "\r\n"
        elif mode == "tabs":
            self.col_sep = "\t"
        elif mode == "list":
            self.col_sep, self.row_sep = "|", "\n"
        elif mode == "ascii":
            self.col_sep, self.row_sep = "\x1f", "\x1e"
        elif mode == "insert":
            self.insert_table = quote_ident(args[1]) if len(args) > 1 else '"table"'
        if mode == "column":
            self.headers = True

    def dot_print(self, args):
        self.write(" ".join(args) + "\n")

    def dot_output(self, args):
        self.close_output()
        if args and args[0] not in ("stdout", "-"):
            try:
                self.out = open(args[0], "w", encoding="utf-8", errors="surrogateescape")
            except OSError:
                raise ShellError('cannot open "%s"' % args[0])

    def dot_once(self, args):
        if len(args) != 1:
            raise Usage(".once FILE")
        self.dot_output(args)
        self.out_count = 2

    def close_output(self):
        if self.out is not sys.stdout:
            self.out.close()
            self.out = sys.stdout
        self.out_count = 0

    def dot_open(self, args):
        flags = [a for a in args if a.startswith("-")]
        names = [a for a in args if not a.startswith("-")]
        if self.db is not None:
            self.db.close()
            self.db = None
        self.readonly = "--readonly" in flags
        if "--new" in flags and names and os.path.exists(names[0]):
            os.unlink(names[0])
        self.path = names[0] if names else ":memory:"
        self.open(self.path)

    def dot_read(self, args):
        if len(args) != 1:
            raise Usage(".read FILE")
        try:
            with open(args[0], encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError:
            raise ShellError('cannot open "%s"' % args[0])
        failed, self.failed = self.failed, False
        done = self.run_lines(io.StringIO(text))
        ok = done and not self.failed
        self.failed = self.failed or failed
        return ok

    def dot_tables(self, args):
        self.list_names("type IN ('table','view') AND name NOT LIKE 'sqlite_%'", args)

    def dot_indexes(self, args):
        self.list_names("type='index'", args, column="tbl_name")

    def list_names(self, where, args, column="name"):
        sql = "SELECT name FROM sqlite_schema WHERE %s" % where
        params = ()
        if args:
            sql += " AND %s LIKE ?" % column
            params = (args[0],)
        names = sorted(r[0] for r in self.query(sql + " ORDER BY 1", params))
        if not names:
            return
        width = max(len(n) for n in names)
        cols = max(1, 80 // (width + 2))
        nrows = (len(names) + cols - 1) // cols
        for i in range(nrows):
            line = []
            for j in range(i, len(names), nrows):
                line.append(("" if j < nrows else "  ") + names[j].ljust(width))
            self.write("".join(line) + "\n")

    def dot_schema(self, args):
        flags = [a for a in args if a.startswith("-")]
        names = [a for a in args if not a.startswith("-")]
        sql = ("SELECT sql, type, name FROM sqlite_schema WHERE sql IS NOT NULL"
               " AND name NOT LIKE 'sqlite_%'")
        params = ()
        if names:
            sql += " AND (tbl_name LIKE ? OR name LIKE ?)"
            params = (names[0], names[0])
        del flags
        for text, kind, name in self.query(sql + " ORDER BY rowid", params):
            if kind == "view":
                text += self.view_columns(name)
            text = with_if_not_exists(text)
            self.write(text + ";\n")

    def view_columns(self, name):
        try:
            cur = self.db.execute("SELECT * FROM %s LIMIT 0" % quote_ident(name, always=True))
        except sqlite3.Error:
            return ""
        cols = ",".join(quote_ident(d[0]) for d in cur.description or ())
        return "\n/* %s(%s) */" % (name, cols)

    def dot_databases(self, args):
        for _, name, path in self.query("PRAGMA database_list"):
            access = "r/o" if self.readonly else "r/w"
            self.write('%s: %s %s\n' % (name, path or '""', access))

    def dot_changes(self, args):
        pass

    def dot_timer(self, args):
        on_off(args, ".timer on|off")

    def dot_show(self, args):
        for label, value in (("echo", on_off_text(self.echo)),
                             ("headers", on_off_text(self.headers)),
                             ("mode", self.mode),
                             ("nullvalue", '"%s"' % self.null),
                             ("output", "stdout" if self.out is sys.stdout else self.out.name),
                             ("colseparator", json_string(self.col_sep)),
                             ("rowseparator", json_string(self.row_sep)),
                             ("filename", self.path)):
            self.write("%12s: %s\n" % (label, value))

    def dot_help(self, args):
        self.write(DOT_HELP)

    def dot_shell(self, args):
        import subprocess
        subprocess.run(" ".join(args), shell=True)

    def dot_dump(self, args):
        w = self.write
        w("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
        like = args[0] if args else "%"
        tables = self.query(
            "SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND type='table'"
            " AND name LIKE ? ORDER BY name='sqlite_sequence', rowid", (like,))
        for name, sql in tables:
            if name == "sqlite_sequence":
                w("DELETE FROM sqlite_sequence;\n")
            elif name.startswith("sqlite_"):
                continue
            elif sql.upper().startswith("CREATE VIRTUAL TABLE"):
                w("PRAGMA writable_schema=ON;\n")
            else:
                w(with_if_not_exists(sql) + ";\n")
            ident = quote_ident(name)
            for row in self.query("SELECT * FROM %s" % quote_ident(name, always=True)):
                w("INSERT INTO %s VALUES(%s);\n" % (ident, ",".join(self.quoted(v) for v in row)))
        others = self.query(
            "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND type IN"
            " ('index','trigger','view') AND tbl_name LIKE ? ORDER BY rowid", (like,))
        for (sql,) in others:
            w(sql + ";\n")
        w("COMMIT;\n")

    def dot_import(self, args):
        opts = {"csv": self.mode == "csv", "skip": 0, "schema": "main"}
        rest = []
        it = iter(args)
        for a in it:
            if a in ("--csv", "-csv"):
                opts["csv"] = True
            elif a in ("--ascii", "-ascii"):
                opts["csv"] = False
            elif a in ("--skip", "-skip"):
                opts["skip"] = atoi(next(it, "0"))
            elif a in ("--schema", "-schema"):
                opts["schema"] = next(it, "main")
            elif a.startswith("-") and a != "-":
                raise ShellError("unknown option: %s" % a)
            else:
                rest.append(a)
        if not rest:
            sys.stdout.write("ERROR: missing FILE argument. Usage:\n" + IMPORT_HELP)
            raise Failed()
        if len(rest) != 2:
            raise Usage(".import FILE TABLE")
        self.import_file(rest[0], rest[1], opts)

    def import_file(self, path, table, opts):
        if self.mode == "csv" and self.row_sep == "\r\n":
            # 3.40 swaps the CSV output's CRLF for the input's LF for good.
            self.row_sep = "\n"
        try:
            if path == "-":
                text = valid_text(sys.stdin.read())
            else:
                with open(path, encoding="utf-8", errors="replace", newline="") as f:
                    text = f.read()
        except OSError:
            raise ShellError("cannot open \"%s\"" % path)
        if self.mode == "ascii" and not opts["csv"]:
            records = [line.split(self.col_sep) for line in text.split(self.row_sep) if line]
        else:
            sep = "," if opts["csv"] or len(self.col_sep) != 1 else self.col_sep
            records = [r for r in csv.reader(io.StringIO(text), delimiter=sep) if r]
        records = records[opts["skip"]:]
        if self.db is None:
            self.open(self.path)
        ident = quote_ident(table, always=True)
        exists = self.query("SELECT 1 FROM sqlite_schema WHERE type='table' AND name=?", (table,))
        start = 0
        if not exists:
            if not records:
                raise ShellError("empty file: %s" % path)
            cols = ", ".join('"%s" TEXT' % c.replace('"', '""') for c in records[0])
            self.db.execute("CREATE TABLE IF NOT EXISTS %s(\n%s)" % (ident, cols))
            start = 1
        ncols = len(self.db.execute("SELECT * FROM %s LIMIT 0" % ident).description)
        sql = "INSERT INTO %s VALUES(%s)" % (ident, ",".join("?" * ncols))
        self.db.execute("BEGIN")
        try:
            for n, rec in enumerate(records[start:], start=start + 1 + opts["skip"]):
                if len(rec) < ncols:
                    sys.stderr.write("%s:%d: expected %d columns but found %d - filling the rest"
                                     " with NULL\n" % (path, n, ncols, len(rec)))
                    rec = rec + [None] * (ncols - len(rec))
                elif len(rec) > ncols:
                    sys.stderr.write("%s:%d: expected %d columns but found %d - extras ignored\n"
                                     % (path, n, ncols, len(rec)))
                    rec = rec[:ncols]
                self.db.execute(sql, rec)
            self.db.execute("COMMIT")
        except sqlite3.Error:
            self.db.execute("ROLLBACK")
            raise

    def query(self, sql, params=()):
        if self.db is None:
            self.open(self.path)
        return self.db.execute(sql, params).fetchall()

    # ---- input ----

    def run_lines(self, lines, from_args=False):
        """Reads SQL and dot-commands line by line; False once bailed."""
        buf = []
        start = 0
        for n, line in enumerate(lines, start=1):
            line = valid_text(line.rstrip("\n"))
            if not buf and line[:1] in (".", "#"):
                if line.startswith("."):
                    if not self.one_dot(line, n) and self.bail:
                        return False
                continue
            if not buf:
                if not line.strip():
                    continue
                start = n
            buf.append(line)
            sql = "\n".join(buf)
            if sqlite3.complete_statement(sql):
                buf = []
                ok = self.execute(sql, start, from_args)
                if self.out_count:
                    self.close_output()
                if not ok and self.bail:
                    return False
        if buf and "\n".join(buf).strip():
            sql = "\n".join(buf)
            if not self.execute(sql, start, from_args) and self.bail:
                return False
        return True

    def one_dot(self, line, n, from_args=False):
        if self.echo and not from_args:
            self.write(line + "\n")
        try:
            return self.dot(line)
        except Usage as e:
            sys.stderr.write("Usage: %s\n" % e)
        except Failed:
            pass
        except ShellError as e:
            sys.stderr.write("Error: %s\n" % e)
        except sqlite3.Error as e:
            sys.stderr.write("Error: %s\n" % e)
        self.failed = True
        self.status = 1
        return False

    def run_argument(self, text):
        """One SQL-or-dot argument after the file name."""
        text = valid_text(text)
        if text.startswith("."):
            return self.one_dot(text, 1, from_args=True)
        return self.execute(text, 1, True)


class Usage(Exception):
    pass


class Failed(Exception):
    """A dot-command that failed and has said why itself."""


IMPORT_HELP = """.import FILE TABLE       Import data from FILE into TABLE
   Options:
     --ascii               Use \\037 and \\036 as column and row separators
     --csv                 Use , and \\n as column and row separators
     --skip N              Skip the first N rows of input
     --schema S            Target table to be S.TABLE
     -v                    "Verbose" - increase auxiliary output
   Notes:
     *  If TABLE does not exist, it is created.  The first row of input
        determines the column names.
     *  If neither --csv or --ascii are used, the input mode is derived
        from the ".mode" output mode
     *  If FILE begins with "|" then it is a command that generates the
        input text.
"""


DOT_ALIASES = {"exit": "quit", "header": "headers", "system": "shell", "schema": "schema",
               "fullschema": "schema"}

DOT_HELP = """.bail on|off             Stop after hitting an error.  Default OFF
.databases               List names and files of attached databases
.dump ?OBJECTS?          Render database content as SQL
.echo on|off             Turn command echo on or off
.exit ?CODE?             Exit this program with return-code CODE
.headers on|off          Turn display of headers on or off
.help ?-all? ?PATTERN?   Show help text for PATTERN
.import FILE TABLE       Import data from FILE into TABLE
.indexes ?TABLE?         Show names of indexes
.mode MODE ?TABLE?       Set output mode
.nullvalue STRING        Use STRING in place of NULL values
.once FILE               Output for the next SQL command only to FILE
.open ?OPTIONS? ?FILE?   Close existing database and reopen FILE
.output ?FILE?           Send output to FILE or stdout if FILE is omitted
.print STRING...         Print literal STRING
.quit                    Exit this program
.read FILE               Read input from FILE
.schema ?PATTERN?        Show the CREATE statements matching PATTERN
.separator COL ?ROW?     Change the column and row separators
.shell CMD ARGS...       Run CMD ARGS... in a system shell
.show                    Show the current values for various settings
.tables ?TABLE?          List names of tables matching LIKE pattern TABLE
.width NUM1 NUM2 ...     Set minimum column widths for columnar output
"""


# ---- helpers ----

EQP = re.compile(r"\s*EXPLAIN\s+QUERY\s+PLAN\b", re.I)


def atoi(text):
    """C's atoi, as the real shell reads numbers: the leading integer, or 0."""
    m = re.match(r"\s*[+-]?\d+", text)
    return int(m.group()) if m else 0


def valid_text(text):
    """`text` with bytes that are not UTF-8 (kept by python as surrogates,
    which SQLite cannot take) shown as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def split_statements(sql):
    """`sql` cut into complete statements, each with its line offset."""
    out = []
    rest = sql
    line = 0
    while rest.strip():
        cut = None
        for m in re.finditer(";", rest):
            if sqlite3.complete_statement(rest[:m.end()]):
                cut = m.end()
                break
        if cut is None:
            cut = len(rest)
        stmt = rest[:cut]
        lead = len(stmt) - len(stmt.lstrip())
        line += stmt[:lead].count("\n")
        body = stmt.strip()
        if body.rstrip(";").strip() and not only_comments(body):
            out.append((body, line, rest[lead:].rstrip()))
        line += stmt[lead:].count("\n")
        rest = rest[cut:]
    return out


def with_if_not_exists(sql):
    """A table whose name is quoted prints as CREATE TABLE IF NOT EXISTS,
    as the real shell's .schema and .dump write it."""
    if re.match(r"CREATE TABLE [\"']", sql, re.I):
        return "CREATE TABLE IF NOT EXISTS " + sql[13:]
    return sql


def only_comments(sql):
    stripped = re.sub(r"--[^\n]*|/\*.*?\*/", "", sql, flags=re.S)
    return not stripped.replace(";", "").strip()


# Errors whose place in the statement the real shell shows (it asks
# sqlite3_error_offset, which python does not expose): the named token.
PLACED_ERRORS = (
    r'near "(.*)": syntax error',
    r"no such column: (.*)",
    r"no such function: (.*)",
    r"table (\S+) already exists",
)


def error_context(message, sql):
    """The statement with a caret under the token the error names, as
    3.40's shell_error_context lays it out."""
    for pattern in PLACED_ERRORS:
        m = re.match(pattern, message)
        if m:
            break
    else:
        return None
    token = m.group(1)
    if re.match(r"\w+$", token):
        found = re.search(r"(?<!\w)%s(?!\w)" % re.escape(token), sql)
    else:
        found = re.search(re.escape(token), sql)
    if not found:
        return None
    offset = found.start()
    while offset > 50:
        offset -= 1
        sql = sql[1:]
    code = re.sub(r"\s", " ", sql[:78])
    if offset < 25:
        return ["  " + code, "  " + " " * offset + "^--- error here"]
    return ["  " + code, "  " + " " * (offset - 14) + "error here ---^"]


def csv_field(text, sep):
    needs = text == "" or sep in text or any(
        ord(c) < 0x21 or c in "\"'" or ord(c) >= 0x7F for c in text)
    return '"%s"' % text.replace('"', '""') if needs else text


def json_string(text):
    return json.dumps(text, ensure_ascii=False)


def html(text):
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def wrap(text, width):
    """`text` cut into pieces of `width` characters (at least one piece)."""
    if width <= 0 or len(text) <= width:
        return [text]
    return [text[i:i + width] for i in range(0, len(text), width)]


def grid_rule(widths, left, mid, right, fill):
    return left + mid.join(fill * (w + 2) for w in widths) + right + "\n"


def grid_row(values, widths, left, mid, right, center=False):
    parts = []
    for v, w in zip(values, widths):
        if center:
            pad = w - len(v)
            v = " " * (pad // 2) + v + " " * (pad - pad // 2)
        else:
            v = v.ljust(w)
        parts.append(" %s " % v)
    return left + mid.join(parts) + right + "\n"


KEYWORDS = frozenset("""ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH
AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT CONFLICT
CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT
DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE
EXCLUSIVE EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP
GROUPS HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO
IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL
NULLS OF OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY
RAISE RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT
ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER
UNBOUNDED UNION UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH
WITHOUT""".split())


def quote_ident(name, always=False):
    plain = re.match(r"[A-Za-z_][A-Za-z0-9_]*$", name) and name.upper() not in KEYWORDS
    if plain and not always:
        return name
    return '"%s"' % name.replace('"', '""')


def split_dot_args(text):
    """A dot-command's words: quotes group, as the real shell reads them."""
    args = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if text[i] in "\"'":
            q = text[i]
            j = i + 1
            word = []
            while j < n and text[j] != q:
                if q == '"' and text[j] == "\\" and j + 1 < n:
                    j += 1
                word.append(text[j])
                j += 1
            args.append("".join(word))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace():
                j += 1
            args.append(text[i:j])
            i = j
    return args


def unescape(text):
    return (text.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r")
            .replace("\\\\", "\\"))


def on_off(args, usage):
    if len(args) != 1:
        raise Usage(usage)
    word = args[0].lower()
    if word in ("on", "yes", "true", "1"):
        return True
    if word in ("off", "no", "false", "0"):
        return False
    sys.stderr.write("ERROR: Not a boolean value: \"%s\". Assuming \"no\".\n" % args[0])
    return False


def on_off_text(value):
    return "on" if value else "off"


def parse_options(shell, argv):
    """Options, file name and the SQL arguments; None when done already."""
    rest = []
    cmds = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        # Options count wherever they are, after the file name too.
        if not arg.startswith("-") or arg == "-":
            rest.append(arg)
            continue
        name = arg.lstrip("-")
        if name in VALUE_OPTIONS:
            if i >= len(argv):
                sys.stderr.write("sqlite3: Error: missing argument to %s\n" % arg)
                raise Quit(1)
            value = argv[i]
            i += 1
            if name == "separator":
                shell.col_sep = unescape(value)
            elif name == "newline":
                shell.row_sep = unescape(value)
            elif name == "nullvalue":
                shell.null = value
            elif name in ("cmd", "init"):
                cmds.append((name, value))
        elif name in OPTION_MODES:
            headers = shell.headers
            shell.dot_mode([name])
            shell.headers = headers
            if name == "csv":
                shell.row_sep = "\n"
        elif name == "header":
            shell.headers = True
        elif name == "noheader":
            shell.headers = False
        elif name == "bail":
            shell.bail = True
        elif name == "echo":
            shell.echo = True
        elif name == "readonly":
            shell.readonly = True
        elif name in ("batch", "interactive", "safe", "nofollow", "memtrace", "stats"):
            pass
        elif name == "version":
            source = sqlite3.connect(":memory:").execute("select sqlite_source_id()").fetchone()[0]
            shell.write("%s %s\n" % (sqlite3.sqlite_version, source))
            raise Quit(0)
        elif name == "help":
            sys.stderr.write(USAGE)
            raise Quit(0)
        else:
            sys.stderr.write("sqlite3: Error: unknown option: %s\nUse -help for a list of options.\n"
                             % arg)
            raise Quit(1)
    return rest, cmds


def main(argv):
    shell = Shell()
    shell.status = 0
    try:
        rest, cmds = parse_options(shell, argv)
        if rest:
            shell.path = rest[0]
        try:
            shell.open(shell.path)
        except ShellError as e:
            sys.stderr.write("Error: %s\n" % e)
            return 1
        for kind, value in cmds:
            if kind == "init":
                shell.dot_read([value])
            elif not shell.run_argument(value) and shell.bail:
                return shell.status or 1
        if len(rest) > 1:
            for text in rest[1:]:
                if not shell.run_argument(text):
                    return shell.status or 1
            return 0
        shell.run_lines(sys.stdin)
        return 1 if shell.failed else 0
    except Quit as q:
        return q.code or (1 if shell.failed else 0)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001
        # Never a traceback: one line, as the real shell's errors are.
        sys.stdout.flush()
        sys.stderr.write("Error: %s\n" % e)
        return 1
    finally:
        shell.close_output()
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
