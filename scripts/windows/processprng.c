/*
 * bcryptprimitives.dll for Wine 8.0, which lacks it: Go 1.24 and later load
 * ProcessPrng from it at start and die without it. This one exports only
 * ProcessPrng, filled by advapi32's RtlGenRandom (SystemFunction036), the
 * system's CSPRNG. Test prefixes only: never shipped with Carrier, and a
 * real Windows (10 and later) has its own.
 *
 * x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll processprng.c processprng.def -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
