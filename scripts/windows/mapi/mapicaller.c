/*
 * A program's "Send by email", for scripts/windows/test-msi.sh: loads
 * mapi32.dll, the system's Simple MAPI (which forwards to the default
 * mail client's DLL, HKLM\Software\Clients\Mail), and calls MAPISendMail
 * (A) or MAPISendMailW (W) with one recipient, a subject, a body and one
 * attachment, as Office does, with MAPI_DIALOG. Prints what it returned
 * and exits with it.
 *
 *   mapicaller.exe A|W TO SUBJECT BODY PATH NAME
 *
 * M calls MAPISendMailW with a message whose mailto: link is longer than
 * a Windows command line: a body of REPEAT times LongLine (below) and
 * COUNT attachments, each PATH, named "<i>-NAME" (i from 1).
 *
 *   mapicaller.exe M TO SUBJECT REPEAT PATH NAME COUNT
 *
 * Built with x86_64-w64-mingw32-gcc -municode.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <mapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

typedef struct {
	ULONG ulReserved, ulRecipClass;
	PWSTR lpszName, lpszAddress;
	ULONG ulEIDSize;
	PVOID lpEntryID;
} RecipW;
typedef struct {
	ULONG ulReserved, flFlags, nPosition;
	PWSTR lpszPathName, lpszFileName;
	PVOID lpFileType;
} FileW;
typedef struct {
	ULONG ulReserved;
	PWSTR lpszSubject, lpszNoteText, lpszMessageType, lpszDateReceived, lpszConversationID;
	FLAGS flFlags;
	RecipW *lpOriginator;
	ULONG nRecipCount;
	RecipW *lpRecips;
	ULONG nFileCount;
	FileW *lpFiles;
} MessageW;
typedef ULONG(WINAPI *sendW)(LHANDLE, ULONG_PTR, MessageW *, FLAGS, ULONG);

static char *ansi(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_ACP, 0, w, -1, NULL, 0, NULL, NULL);
	char *s = malloc(n);
	WideCharToMultiByte(CP_ACP, 0, w, -1, s, n, NULL, NULL);
	return s;
}

/* A line of the long body: test-mapi.sh writes the same. */
#define LongLine L"Zo\u00eb's line, \u00fcn\u00efcode & 100%.\r\n"

int wmain(int argc, wchar_t **argv)
{
	int many = argc == 8 && !wcscmp(argv[1], L"M");
	if (!many && (argc != 7 || (wcscmp(argv[1], L"A") && wcscmp(argv[1], L"W")))) {
		fwprintf(stderr, L"usage: mapicaller A|W TO SUBJECT BODY PATH NAME\n"
				 L"       mapicaller M TO SUBJECT REPEAT PATH NAME COUNT\n");
		return 2;
	}
	HMODULE mapi = LoadLibraryW(L"mapi32.dll");
	if (!mapi) {
		fwprintf(stderr, L"mapicaller: no mapi32.dll (%lu)\n", GetLastError());
		return 2;
	}
	ULONG r;
	if (many) {
		sendW send = (sendW)(void *)GetProcAddress(mapi, "MAPISendMailW");
		if (!send) {
			fwprintf(stderr, L"mapicaller: mapi32.dll has no MAPISendMailW\n");
			return 2;
		}
		int repeat = _wtoi(argv[4]), count = _wtoi(argv[7]);
		if (repeat < 0 || count < 0 || count > 1000) {
			fwprintf(stderr, L"mapicaller: REPEAT and COUNT are whole numbers, COUNT up to 1000\n");
			return 2;
		}
		size_t line = wcslen(LongLine);
		wchar_t *body = malloc((line * repeat + 1) * sizeof(wchar_t));
		FileW *files = calloc(count + 1, sizeof(FileW));
		if (!body || !files)
			return 2;
		body[0] = 0;
		for (int i = 0; i < repeat; i++)
			wcscpy(body + i * line, LongLine);
		for (int i = 0; i < count; i++) {
			size_t cap = wcslen(argv[6]) + 16;
			wchar_t *name = malloc(cap * sizeof(wchar_t));
			swprintf(name, cap, L"%d-%ls", i + 1, argv[6]);
			files[i].nPosition = (ULONG)-1;
			files[i].lpszPathName = argv[5];
			files[i].lpszFileName = name;
		}
		RecipW to = {0, MAPI_TO, argv[2], NULL, 0, NULL};
		MessageW m = {0};
		m.lpszSubject = argv[3];
		m.lpszNoteText = body;
		m.nRecipCount = 1;
		m.lpRecips = &to;
		m.nFileCount = count;
		m.lpFiles = files;
		r = send(0, 0, &m, MAPI_DIALOG | MAPI_LOGON_UI, 0);
	} else if (argv[1][0] == L'W') {
		sendW send = (sendW)(void *)GetProcAddress(mapi, "MAPISendMailW");
		if (!send) {
			fwprintf(stderr, L"mapicaller: mapi32.dll has no MAPISendMailW\n");
			return 2;
		}
		RecipW to = {0, MAPI_TO, argv[2], NULL, 0, NULL};
		FileW file = {0, 0, (ULONG)-1, argv[5], argv[6], NULL};
		MessageW m = {0};
		m.lpszSubject = argv[3];
		m.lpszNoteText = argv[4];
		m.nRecipCount = 1;
		m.lpRecips = &to;
		m.nFileCount = 1;
		m.lpFiles = &file;
		r = send(0, 0, &m, MAPI_DIALOG | MAPI_LOGON_UI, 0);
	} else {
		LPMAPISENDMAIL send = (LPMAPISENDMAIL)(void *)GetProcAddress(mapi, "MAPISendMail");
		if (!send) {
			fwprintf(stderr, L"mapicaller: mapi32.dll has no MAPISendMail\n");
			return 2;
		}
		char *address = malloc(wcslen(argv[2]) * 4 + 8);
		sprintf(address, "SMTP:%s", ansi(argv[2]));
		MapiRecipDesc to = {0, MAPI_TO, "Zoe", address, 0, NULL};
		MapiFileDesc file = {0, 0, (ULONG)-1, ansi(argv[5]), ansi(argv[6]), NULL};
		MapiMessage m = {0};
		m.lpszSubject = ansi(argv[3]);
		m.lpszNoteText = ansi(argv[4]);
		m.nRecipCount = 1;
		m.lpRecips = &to;
		m.nFileCount = 1;
		m.lpFiles = &file;
		r = send(0, 0, &m, MAPI_DIALOG | MAPI_LOGON_UI, 0);
	}
	wprintf(L"MAPISendMail%ls returned %lu\n", argv[1][0] == L'A' ? L"" : L"W", r);
	return (int)r;
}
