#ifndef CHIME_CQRENCODE_SHIM_H
#define CHIME_CQRENCODE_SHIM_H
// libqrencode (Debian libqrencode-dev): QR codes for sign-in links, in the terminal and the web center.
#include <qrencode.h>
#endif
