#ifndef CHIME_CSQLITE_SHIM_H
#define CHIME_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type chime_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type chime_sqlite_static(void) { return SQLITE_STATIC; }

/// sqlite3_db_config is variadic; wrap the one call Chime needs.
static inline int chime_sqlite_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}
/// sqlite3_config is variadic too. Without memory statistics SQLite's allocations take no global
/// mutex (Chime reads none of them: no sqlite3_memory_used, no soft heap limit). Only effective
/// before SQLite initializes; it answers SQLITE_MISUSE after, and nothing changes.
static inline int chime_sqlite_no_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
