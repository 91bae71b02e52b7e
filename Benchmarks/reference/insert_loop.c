/*
 * insert_loop.c -- "physical limit" reference for Chime's pending store.
 *
 * Inserts N pending-notification rows into a fresh SQLite database using
 * exactly the schema Chime uses, with one prepared statement inside one
 * transaction. Nothing else happens per row (no scheduling logic, no
 * encoding), so the resulting rate is an upper bound for what any store
 * built on this schema can achieve on this machine.
 *
 *   build: gcc -O2 -o insert_loop insert_loop.c -lsqlite3
 *   run:   ./insert_loop /tmp/ref.sqlite [N] [--all-indexes | --today]   (N defaults to 1000000)
 *
 * The table and pending_due are those of Chime's first schema, the reference the targets are set
 * against. --all-indexes adds the indexes later schema versions put on the same table
 * (pending_location, pending_floating, pending_order), to tell what the extra indexes cost from
 * what Chime adds. --today is the table as Chime's store has it since schema version 8: a rowid
 * table with its key (app, identifier) in a unique index, and every index: the same work per row
 * as Chime's store does today.
 *   out:   {"rows": N, "seconds": S, "rowsPerSecond": R}
 *
 * The timer covers BEGIN .. COMMIT (the insert loop and the commit),
 * not opening the file or creating the schema.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#define BLOB_MAX 512

static void die(sqlite3 *db, const char *what) {
    fprintf(stderr, "insert_loop: %s: %s\n", what, db ? sqlite3_errmsg(db) : "error");
    if (db) sqlite3_close(db);
    exit(1);
}

static void exec_sql(sqlite3 *db, const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "insert_loop: %s\n  in: %s\n", err ? err : "?", sql);
        sqlite3_free(err);
        sqlite3_close(db);
        exit(1);
    }
}

/* xorshift64*: small, fast, deterministic for a fixed seed. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rng_next(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}
/* uniform double in [0, 1) */
static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Build a ~330-byte request payload for row i: a title, a body of ~60
 * characters and ~200 bytes of user info, in a simple tag/length layout.
 * Content varies per row.
 */
static int build_request(unsigned char *buf, long i) {
    char title[48], body[96];
    int tl = snprintf(title, sizeof title, "Reminder %ld", i);
    int bl = snprintf(body, sizeof body,
                      "Don't forget item #%ld: check the schedule and reply soon.", i);
    int n = 0;

    buf[n++] = 'T';
    buf[n++] = (unsigned char)tl;
    memcpy(buf + n, title, (size_t)tl);
    n += tl;

    buf[n++] = 'B';
    buf[n++] = (unsigned char)bl;
    memcpy(buf + n, body, (size_t)bl);
    n += bl;

    /* user info: 200 bytes of pseudo-random data derived from the row */
    buf[n++] = 'U';
    buf[n++] = 200;
    uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)i;
    for (int k = 0; k < 200; k++) {
        h ^= (uint64_t)k;
        h *= 0x100000001b3ULL;
        buf[n++] = (unsigned char)(h >> 32);
    }

    /* pad to a fixed 330 bytes so every row carries the same payload size */
    while (n < 330) buf[n++] = 0;
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DBFILE [ROWS] [--all-indexes | --today]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    long rows = 1000000;
    int today = argc >= 4 && strcmp(argv[3], "--today") == 0;
    int all_indexes = today || (argc >= 4 && strcmp(argv[3], "--all-indexes") == 0);
    if (argc >= 4 && !all_indexes) {
        fprintf(stderr, "insert_loop: unknown option '%s'; accepted: --all-indexes, --today\n", argv[3]);
        return 2;
    }
    if (argc >= 3) {
        char *end = NULL;
        rows = strtol(argv[2], &end, 10);
        if (!end || *end != '\0' || rows <= 0) {
            fprintf(stderr, "insert_loop: bad row count '%s'\n", argv[2]);
            return 2;
        }
    }

    /* fresh database: remove the file and its WAL/SHM companions */
    char side[4096];
    if (unlink(path) != 0 && errno != ENOENT) { perror(path); return 1; }
    snprintf(side, sizeof side, "%s-wal", path);
    if (unlink(side) != 0 && errno != ENOENT) { perror(side); return 1; }
    snprintf(side, sizeof side, "%s-shm", path);
    if (unlink(side) != 0 && errno != ENOENT) { perror(side); return 1; }

    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) die(db, "open");

    exec_sql(db, "PRAGMA journal_mode=WAL;");
    exec_sql(db, "PRAGMA synchronous=NORMAL;");
    if (today) {
        exec_sql(db,
                 "CREATE TABLE pending (\n"
                 "  app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL,\n"
                 "  next_fire REAL, kind INTEGER NOT NULL, floating INTEGER NOT NULL DEFAULT 0,\n"
                 "  anchor REAL NOT NULL, inside INTEGER, request BLOB NOT NULL);");
        exec_sql(db, "CREATE UNIQUE INDEX pending_key ON pending(app, identifier);");
    } else {
        exec_sql(db,
                 "CREATE TABLE pending (\n"
                 "  app TEXT NOT NULL, identifier TEXT NOT NULL, seq INTEGER NOT NULL,\n"
                 "  next_fire REAL, kind INTEGER NOT NULL, floating INTEGER NOT NULL DEFAULT 0,\n"
                 "  anchor REAL NOT NULL, inside INTEGER, request BLOB NOT NULL,\n"
                 "  PRIMARY KEY (app, identifier)) WITHOUT ROWID;");
    }
    exec_sql(db, "CREATE INDEX pending_due ON pending(next_fire, seq) WHERE next_fire IS NOT NULL;");
    if (all_indexes) {
        exec_sql(db, "CREATE INDEX pending_location ON pending(seq) WHERE kind = 3;");
        exec_sql(db, "CREATE INDEX pending_floating ON pending(seq) WHERE floating = 1;");
        exec_sql(db, "CREATE INDEX pending_order ON pending(app, seq);");
    }

    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO pending (app, identifier, seq, next_fire, kind, floating,"
                           " anchor, inside, request) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, NULL, ?7)",
                           -1, &ins, NULL) != SQLITE_OK)
        die(db, "prepare insert");

    static const char app[] = "com.example.bench";
    const double now = wall_now();
    const double span = 86400.0 * 30.0 - 60.0;
    char ident[32];
    unsigned char blob[BLOB_MAX];

    double t0 = mono_now();
    exec_sql(db, "BEGIN;");
    for (long i = 0; i < rows; i++) {
        int il = snprintf(ident, sizeof ident, "req-%ld", i);
        int bl = build_request(blob, i);
        double next_fire = now + 60.0 + rng_unit() * span;

        sqlite3_bind_text(ins, 1, app, (int)(sizeof app - 1), SQLITE_STATIC);
        sqlite3_bind_text(ins, 2, ident, il, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 3, (sqlite3_int64)i);
        sqlite3_bind_double(ins, 4, next_fire);
        sqlite3_bind_int(ins, 5, 1);
        sqlite3_bind_double(ins, 6, now);
        sqlite3_bind_blob(ins, 7, blob, bl, SQLITE_STATIC);

        if (sqlite3_step(ins) != SQLITE_DONE) die(db, "insert");
        sqlite3_reset(ins);
    }
    exec_sql(db, "COMMIT;");
    double secs = mono_now() - t0;

    sqlite3_finalize(ins);
    if (sqlite3_close(db) != SQLITE_OK) die(db, "close");

    printf("{\"rows\": %ld, \"seconds\": %.3f, \"rowsPerSecond\": %.0f}\n",
           rows, secs, secs > 0 ? (double)rows / secs : 0.0);
    return 0;
}
