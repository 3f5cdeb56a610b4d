// SQLite's C API for the capture store's hot insert path (the same libsqlite3 GRDB links).
#include <sqlite3.h>
