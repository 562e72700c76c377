// Intel ISA-L (Debian libisal-dev): the raw-deflate inflater and the CRC-32 the BLIP codec uses.
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>

// Swift does not import inflate_state's 64 KiB output array: its address, for reading the window.
static inline const uint8_t *cisal_inflate_tmp_out_buffer(const struct inflate_state *state) {
    return state->tmp_out_buffer;
}
