#ifndef CHIME_CLIBPQ_SHIM_H
#define CHIME_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
