/* hex: hexadecimal digits, as JSON \u escapes and percent-encoding
 * spell bytes.
 *
 * Threads: no state of its own: any thread, on buffers of its own. */
#ifndef HAZ_HEX_H
#define HAZ_HEX_H

/* hex_digit returns the value of the hex digit c (either case), or -1
 * when c is not one. */
int hex_digit(int c);

#endif
