// Intel ISA-L (Debian libisal-dev): the raw-deflate inflater and the CRC-32 the BLIP codec uses.
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>
