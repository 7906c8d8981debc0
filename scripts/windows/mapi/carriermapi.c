/*
 * carriermapi.dll: Carrier as Windows' Simple MAPI mail client. Every
 * program's "Send by email" / "Email as attachment" (Office, Explorer's
 * Send to > Mail recipient, scanners' software) calls MAPISendMail in
 * mapi32.dll, which loads the DLL that HKLM\Software\Clients\Mail\<default>
 * names in DLLPath (DLLPathEx on 64-bit Windows). The .msi installs this
 * DLL beside Carrier.exe and registers it under Clients\Mail\Carrier.
 *
 * A message becomes a mailto: URL (RFC 6068: to, cc, bcc, subject, body)
 * with one attach= file: URI per file, the forms internal/app/mailto.go
 * reads, and Carrier.exe (beside this DLL) is started with it: Compose
 * opens filled in, in the window already open if there is one. Nothing is
 * ever sent from here, with or without MAPI_DIALOG: the person sends.
 *
 * Each attachment is copied first, under the name the caller gave it
 * (lpszFileName; callers often hand a temporary file such as ~WRD0001.tmp
 * and delete it once MAPISendMail returns), into
 * %LOCALAPPDATA%\Carrier\Attachments from programs\<time>-<pid>-<n>\<i>\.
 * Carrier reads attachments in place when it sends, so the copy is what
 * it sends; Carrier removes it once nothing names it any more (Compose,
 * a job, a message kept to reopen: internal/app/programcopies.go), so the
 * layout <message>\<n>\<name> is what Carrier looks for.
 *
 * A URL longer than a Windows command line (32767 characters: a body of
 * roughly 10 KB of text, or a few dozen files) does not go on the command
 * line: it is written to a new file in %LOCALAPPDATA%\Carrier\Links from
 * programs\ and Carrier.exe is started with --mail-link-file and that
 * file's path (internal/app/linkfile.go: Carrier reads it once, only from
 * that folder, which it keeps private, and removes it).
 *
 * Limits: a URL over 1 MiB (internal/app.MaxMailtoURL) is refused with
 * MAPI_E_TEXT_TOO_LARGE and nothing is started; more than 100 files or 500
 * recipients, which Carrier would refuse, with MAPI_E_TOO_MANY_FILES or
 * _RECIPIENTS. The calling program keeps its document and says the mail
 * failed.
 *
 * Built by scripts/windows/package.sh with x86_64-w64-mingw32-gcc; it
 * imports kernel32, user32 and msvcrt only (scripts/windows/imports.sh).
 */
#define WIN32_LEAN_AND_MEAN
#define UNICODE
#define _UNICODE
#include <windows.h>
#include <mapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define MAX_FILES 100      /* internal/app.MaxMailtoAttachments */
#define MAX_RECIPIENTS 500 /* internal/app.MaxMailtoRecipients */
#define MAX_COMMAND 32767  /* CreateProcessW's lpCommandLine, with its NUL */
#define MAX_LINK (1 << 20) /* internal/app.MaxMailtoURL */

/* Simple MAPI's structures with wide strings, as MAPISendMailW takes
 * them (Windows 8's mapi.h; mingw's has only the ANSI ones). */
typedef struct {
	ULONG ulReserved;
	ULONG ulRecipClass;
	PWSTR lpszName;
	PWSTR lpszAddress;
	ULONG ulEIDSize;
	PVOID lpEntryID;
} RecipW;

typedef struct {
	ULONG ulReserved;
	ULONG flFlags;
	ULONG nPosition;
	PWSTR lpszPathName;
	PWSTR lpszFileName;
	PVOID lpFileType;
} FileW;

typedef struct {
	ULONG ulReserved;
	PWSTR lpszSubject;
	PWSTR lpszNoteText;
	PWSTR lpszMessageType;
	PWSTR lpszDateReceived;
	PWSTR lpszConversationID;
	FLAGS flFlags;
	RecipW *lpOriginator;
	ULONG nRecipCount;
	RecipW *lpRecips;
	ULONG nFileCount;
	FileW *lpFiles;
} MessageW;

/* A growing byte string; oom once any growth failed. */
typedef struct {
	char *b;
	size_t n, cap;
	int oom;
} buf;

static void put(buf *u, const char *s, size_t n)
{
	if (u->oom)
		return;
	if (u->n + n + 1 > u->cap) {
		size_t cap = (u->cap ? u->cap * 2 : 256);
		while (cap < u->n + n + 1)
			cap *= 2;
		char *b = realloc(u->b, cap);
		if (!b) {
			u->oom = 1;
			return;
		}
		u->b = b;
		u->cap = cap;
	}
	memcpy(u->b + u->n, s, n);
	u->n += n;
	u->b[u->n] = 0;
}

static void puts0(buf *u, const char *s) { put(u, s, strlen(s)); }

/* enc appends bytes s percent-encoded: only RFC 3986's unreserved
 * characters and those in keep stay as they are. */
static void enc(buf *u, const char *s, size_t n, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~' || (c && keep && strchr(keep, c))) {
			put(u, (const char *)&c, 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			put(u, e, 3);
		}
	}
}

/* utf8 is w in UTF-8 (malloc'd), or NULL when w is not valid UTF-16. */
static char *utf8(const WCHAR *w)
{
	int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, NULL, 0, NULL, NULL);
	if (n <= 0)
		return NULL;
	char *s = malloc(n);
	if (s && WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, s, n, NULL, NULL) != n) {
		free(s);
		return NULL;
	}
	return s;
}

/* sep starts an hfield: "&", unless it is the first after "?". */
static void sep(buf *u)
{
	if (u->n > 0 && u->b[u->n - 1] != '?')
		puts0(u, "&");
}

/* field appends the hfield name=w, w encoded as a mailto: hvalue. */
static int field(buf *u, const char *name, const WCHAR *w)
{
	char *s = utf8(w);
	if (!s)
		return 0;
	sep(u);
	puts0(u, name);
	puts0(u, "=");
	enc(u, s, strlen(s), NULL);
	free(s);
	return 1;
}

/* address is a recipient's address: lpszAddress without the "SMTP:" the
 * address book puts before it, else the name (callers that know only an
 * address put it there). */
static const WCHAR *address(const RecipW *r)
{
	const WCHAR *a = r->lpszAddress && *r->lpszAddress ? r->lpszAddress : r->lpszName;
	if (a && _wcsnicmp(a, L"SMTP:", 5) == 0)
		a += 5;
	return a && *a ? a : NULL;
}

/* baseName is what the copy of a file is called: the name the caller gave
 * it, else its own; no folder in it, no leading dot (Carrier takes no
 * hidden file from a link), nothing Windows forbids in a name. */
static void baseName(const FileW *f, WCHAR *out, size_t cap)
{
	const WCHAR *n = f->lpszFileName && *f->lpszFileName ? f->lpszFileName : f->lpszPathName;
	for (const WCHAR *p = n; *p; p++)
		if (*p == L'\\' || *p == L'/' || *p == L':')
			n = p + 1;
	while (*n == L'.' || *n == L' ')
		n++;
	size_t i = 0;
	for (; *n && i + 1 < cap; n++)
		out[i++] = (*n < 32 || wcschr(L"<>:\"/\\|?*", *n)) ? L'_' : *n;
	while (i > 0 && (out[i - 1] == L' ' || out[i - 1] == L'.'))
		i--;
	out[i] = 0;
	if (i == 0)
		wcsncpy(out, L"attachment", cap);
}

/* copies made for one message, removed again if it is not handed on */
typedef struct {
	WCHAR dir[MAX_PATH * 2];
	WCHAR *paths[MAX_FILES];
	int n;
} copies;

static void undo(copies *c)
{
	for (int i = c->n - 1; i >= 0; i--) {
		DeleteFileW(c->paths[i]);
		WCHAR *slash = wcsrchr(c->paths[i], L'\\');
		if (slash) {
			*slash = 0;
			RemoveDirectoryW(c->paths[i]);
		}
		free(c->paths[i]);
	}
	if (c->dir[0])
		RemoveDirectoryW(c->dir);
	c->n = 0;
}

static void forget(copies *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->paths[i]);
	c->n = 0;
}

/* mkdirs makes every folder of the full path p that is missing. */
static BOOL mkdirs(WCHAR *p)
{
	for (WCHAR *s = p + 3; *s; s++) {
		if (*s != L'\\')
			continue;
		*s = 0;
		BOOL ok = CreateDirectoryW(p, NULL) || GetLastError() == ERROR_ALREADY_EXISTS;
		*s = L'\\';
		if (!ok)
			return FALSE;
	}
	return CreateDirectoryW(p, NULL) || GetLastError() == ERROR_ALREADY_EXISTS;
}

/* copyFile copies f into the message's folder; the copy's full path. */
static ULONG copyFile(copies *c, const FileW *f, WCHAR **out)
{
	if (!f->lpszPathName || !*f->lpszPathName)
		return MAPI_E_ATTACHMENT_NOT_FOUND;
	DWORD attrs = GetFileAttributesW(f->lpszPathName);
	if (attrs == INVALID_FILE_ATTRIBUTES || (attrs & FILE_ATTRIBUTE_DIRECTORY))
		return MAPI_E_ATTACHMENT_NOT_FOUND;
	if (!c->dir[0]) {
		WCHAR local[MAX_PATH];
		DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", local, MAX_PATH);
		if (n == 0 || n >= MAX_PATH)
			return MAPI_E_ATTACHMENT_WRITE_FAILURE;
		static LONG seq;
		SYSTEMTIME t;
		GetLocalTime(&t);
		_snwprintf(c->dir, sizeof c->dir / sizeof c->dir[0] - 1,
			   L"%ls\\Carrier\\Attachments from programs\\%04u%02u%02u-%02u%02u%02u-%lu-%ld", local,
			   t.wYear, t.wMonth, t.wDay, t.wHour, t.wMinute, t.wSecond, GetCurrentProcessId(),
			   InterlockedIncrement(&seq));
		if (!mkdirs(c->dir)) {
			c->dir[0] = 0;
			return MAPI_E_ATTACHMENT_WRITE_FAILURE;
		}
	}
	WCHAR name[MAX_PATH];
	baseName(f, name, MAX_PATH);
	size_t cap = wcslen(c->dir) + wcslen(name) + 16;
	WCHAR *dst = malloc(cap * sizeof(WCHAR));
	if (!dst)
		return MAPI_E_INSUFFICIENT_MEMORY;
	_snwprintf(dst, cap, L"%ls\\%d", c->dir, c->n + 1);
	if (!CreateDirectoryW(dst, NULL)) {
		free(dst);
		return MAPI_E_ATTACHMENT_WRITE_FAILURE;
	}
	wcscat(dst, L"\\");
	wcscat(dst, name);
	if (!CopyFileW(f->lpszPathName, dst, TRUE)) {
		DWORD e = GetLastError();
		WCHAR *slash = wcsrchr(dst, L'\\');
		*slash = 0;
		RemoveDirectoryW(dst);
		free(dst);
		return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? MAPI_E_ATTACHMENT_NOT_FOUND
									     : MAPI_E_ATTACHMENT_OPEN_FAILURE;
	}
	c->paths[c->n++] = dst;
	*out = dst;
	return SUCCESS_SUCCESS;
}

/* fileURI appends path as a file: URI (file:///C:/...), itself encoded
 * as a mailto: hvalue: mailto.go undoes the hvalue's encoding, then the
 * URI's. */
static int fileURI(buf *u, const WCHAR *path)
{
	char *s = utf8(path);
	if (!s)
		return 0;
	for (char *p = s; *p; p++)
		if (*p == '\\')
			*p = '/';
	buf uri = {0};
	puts0(&uri, "file:///");
	enc(&uri, s, strlen(s), "/:");
	free(s);
	if (uri.oom) {
		free(uri.b);
		return 0;
	}
	sep(u);
	puts0(u, "attach=");
	enc(u, uri.b, uri.n, NULL);
	free(uri.b);
	return 1;
}

/* carrierExe is Carrier.exe beside this DLL. */
static BOOL carrierExe(WCHAR *out, DWORD cap)
{
	HMODULE self;
	if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				(LPCWSTR)(void *)&carrierExe, &self))
		return FALSE;
	DWORD n = GetModuleFileNameW(self, out, cap);
	if (n == 0 || n >= cap)
		return FALSE;
	WCHAR *slash = wcsrchr(out, L'\\');
	if (!slash || (size_t)(slash - out) + 13 >= cap)
		return FALSE;
	wcscpy(slash + 1, L"Carrier.exe");
	return GetFileAttributesW(out) != INVALID_FILE_ATTRIBUTES;
}

/* linkFile writes url to a new file of %LOCALAPPDATA%\Carrier\Links from
 * programs (internal/app.MailLinksDir), whose full path goes in out. */
static ULONG linkFile(const char *url, WCHAR *out, size_t cap)
{
	WCHAR local[MAX_PATH];
	DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", local, MAX_PATH);
	if (n == 0 || n >= MAX_PATH)
		return MAPI_E_FAILURE;
	WCHAR dir[MAX_PATH * 2];
	_snwprintf(dir, sizeof dir / sizeof dir[0] - 1, L"%ls\\Carrier\\Links from programs", local);
	dir[sizeof dir / sizeof dir[0] - 1] = 0;
	if (!mkdirs(dir))
		return MAPI_E_FAILURE;
	static LONG seq;
	SYSTEMTIME t;
	GetLocalTime(&t);
	_snwprintf(out, cap - 1, L"%ls\\%04u%02u%02u-%02u%02u%02u-%lu-%ld.txt", dir, t.wYear, t.wMonth, t.wDay, t.wHour,
		   t.wMinute, t.wSecond, GetCurrentProcessId(), InterlockedIncrement(&seq));
	out[cap - 1] = 0;
	HANDLE h = CreateFileW(out, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return MAPI_E_FAILURE;
	DWORD len = (DWORD)strlen(url), wrote = 0;
	BOOL ok = WriteFile(h, url, len, &wrote, NULL) && wrote == len;
	ok = CloseHandle(h) && ok;
	if (!ok) {
		DeleteFileW(out);
		return MAPI_E_FAILURE;
	}
	return SUCCESS_SUCCESS;
}

/* start runs Carrier.exe "URL", or Carrier.exe --mail-link-file "FILE"
 * with the URL in FILE when it is too long for a command line; it does
 * not wait for Carrier. */
static ULONG start(const char *url)
{
	static WCHAR exe[MAX_PATH * 4];
	if (!carrierExe(exe, sizeof exe / sizeof exe[0]))
		return MAPI_E_FAILURE;
	if (strlen(url) > MAX_LINK)
		return MAPI_E_TEXT_TOO_LARGE;
	WCHAR file[MAX_PATH * 3] = {0};
	WCHAR *cmd;
	size_t n = wcslen(exe) + strlen(url) + 6;
	if (n > MAX_COMMAND) {
		ULONG e = linkFile(url, file, sizeof file / sizeof file[0]);
		if (e != SUCCESS_SUCCESS)
			return e;
		n = wcslen(exe) + wcslen(file) + 32;
		cmd = malloc(n * sizeof(WCHAR));
		if (!cmd) {
			DeleteFileW(file);
			return MAPI_E_INSUFFICIENT_MEMORY;
		}
		_snwprintf(cmd, n, L"\"%ls\" --mail-link-file \"%ls\"", exe, file);
	} else {
		cmd = malloc(n * sizeof(WCHAR));
		if (!cmd)
			return MAPI_E_INSUFFICIENT_MEMORY;
		/* url is ASCII: every other byte is percent-encoded, quotes too. */
		int k = _snwprintf(cmd, n, L"\"%ls\" \"", exe);
		for (const char *p = url; *p; p++)
			cmd[k++] = (WCHAR)(unsigned char)*p;
		cmd[k++] = L'"';
		cmd[k] = 0;
	}
	STARTUPINFOW si;
	ZeroMemory(&si, sizeof si);
	si.cb = sizeof si;
	PROCESS_INFORMATION pi;
	BOOL ok = CreateProcessW(exe, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi);
	free(cmd);
	if (!ok) {
		if (file[0])
			DeleteFileW(file);
		return MAPI_E_FAILURE;
	}
	/* Carrier's window may come to the front over the caller's. */
	AllowSetForegroundWindow(pi.dwProcessId);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return SUCCESS_SUCCESS;
}

/* sendW hands m to Carrier's Compose. */
static ULONG sendW(const MessageW *m)
{
	if (!m)
		return MAPI_E_INVALID_MESSAGE;
	if (m->nFileCount > MAX_FILES)
		return MAPI_E_TOO_MANY_FILES;
	if (m->nRecipCount > MAX_RECIPIENTS)
		return MAPI_E_TOO_MANY_RECIPIENTS;
	if ((m->nFileCount && !m->lpFiles) || (m->nRecipCount && !m->lpRecips))
		return MAPI_E_INVALID_MESSAGE;
	buf u = {0};
	puts0(&u, "mailto:?");
	static const char *classes[] = {NULL, "to", "cc", "bcc"};
	for (ULONG i = 0; i < m->nRecipCount; i++) {
		const RecipW *r = &m->lpRecips[i];
		const WCHAR *a = address(r);
		if (r->ulRecipClass < 1 || r->ulRecipClass > 3 || !a)
			continue; /* the originator, or no address at all */
		if (!field(&u, classes[r->ulRecipClass], a)) {
			free(u.b);
			return MAPI_E_INVALID_RECIPS;
		}
	}
	if ((m->lpszSubject && *m->lpszSubject && !field(&u, "subject", m->lpszSubject)) ||
	    (m->lpszNoteText && *m->lpszNoteText && !field(&u, "body", m->lpszNoteText))) {
		free(u.b);
		return MAPI_E_INVALID_MESSAGE;
	}
	copies c = {0};
	for (ULONG i = 0; i < m->nFileCount; i++) {
		WCHAR *copy;
		ULONG e = copyFile(&c, &m->lpFiles[i], &copy);
		if (e == SUCCESS_SUCCESS && !fileURI(&u, copy))
			e = MAPI_E_ATTACHMENT_NOT_FOUND;
		if (e != SUCCESS_SUCCESS) {
			undo(&c);
			free(u.b);
			return e;
		}
	}
	if (u.oom) {
		undo(&c);
		free(u.b);
		return MAPI_E_INSUFFICIENT_MEMORY;
	}
	ULONG e = start(u.b);
	free(u.b);
	if (e != SUCCESS_SUCCESS)
		undo(&c);
	else
		forget(&c);
	return e;
}

ULONG WINAPI MAPISendMailW(LHANDLE session, ULONG_PTR ui, MessageW *m, FLAGS flags, ULONG reserved)
{
	(void)session, (void)ui, (void)flags, (void)reserved;
	return sendW(m);
}

/* wide is s (the ANSI code page) as UTF-16, malloc'd; NULL stays NULL. */
static WCHAR *wide(const char *s, int *bad)
{
	if (!s)
		return NULL;
	int n = MultiByteToWideChar(CP_ACP, 0, s, -1, NULL, 0);
	WCHAR *w = n > 0 ? malloc(n * sizeof(WCHAR)) : NULL;
	if (!w || MultiByteToWideChar(CP_ACP, 0, s, -1, w, n) != n) {
		free(w);
		*bad = 1;
		return NULL;
	}
	return w;
}

ULONG WINAPI MAPISendMail(LHANDLE session, ULONG_PTR ui, lpMapiMessage m, FLAGS flags, ULONG reserved)
{
	(void)session, (void)ui, (void)flags, (void)reserved;
	if (!m)
		return MAPI_E_INVALID_MESSAGE;
	if (m->nFileCount > MAX_FILES)
		return MAPI_E_TOO_MANY_FILES;
	if (m->nRecipCount > MAX_RECIPIENTS)
		return MAPI_E_TOO_MANY_RECIPIENTS;
	int bad = 0;
	MessageW w = {0};
	w.lpszSubject = wide(m->lpszSubject, &bad);
	w.lpszNoteText = wide(m->lpszNoteText, &bad);
	w.nRecipCount = m->lpRecips ? m->nRecipCount : 0;
	w.nFileCount = m->lpFiles ? m->nFileCount : 0;
	w.lpRecips = calloc(w.nRecipCount + 1, sizeof(RecipW));
	w.lpFiles = calloc(w.nFileCount + 1, sizeof(FileW));
	bad |= !w.lpRecips || !w.lpFiles;
	for (ULONG i = 0; !bad && i < w.nRecipCount; i++) {
		w.lpRecips[i].ulRecipClass = m->lpRecips[i].ulRecipClass;
		w.lpRecips[i].lpszName = wide(m->lpRecips[i].lpszName, &bad);
		w.lpRecips[i].lpszAddress = wide(m->lpRecips[i].lpszAddress, &bad);
	}
	for (ULONG i = 0; !bad && i < w.nFileCount; i++) {
		w.lpFiles[i].lpszPathName = wide(m->lpFiles[i].lpszPathName, &bad);
		w.lpFiles[i].lpszFileName = wide(m->lpFiles[i].lpszFileName, &bad);
	}
	ULONG e = bad ? MAPI_E_INSUFFICIENT_MEMORY : sendW(&w);
	for (ULONG i = 0; w.lpRecips && i < w.nRecipCount; i++) {
		free(w.lpRecips[i].lpszName);
		free(w.lpRecips[i].lpszAddress);
	}
	for (ULONG i = 0; w.lpFiles && i < w.nFileCount; i++) {
		free(w.lpFiles[i].lpszPathName);
		free(w.lpFiles[i].lpszFileName);
	}
	free(w.lpRecips);
	free(w.lpFiles);
	free(w.lpszSubject);
	free(w.lpszNoteText);
	return e;
}

/* MAPISendDocuments: files, by paths joined with the delimiter, and their
 * names likewise (or none), in a message with nothing else. */
ULONG WINAPI MAPISendDocuments(ULONG_PTR ui, LPSTR delim, LPSTR paths, LPSTR names, ULONG reserved)
{
	(void)ui, (void)reserved;
	if (!paths || !*paths)
		return MAPI_E_ATTACHMENT_NOT_FOUND;
	char d = delim && *delim ? *delim : ';';
	int bad = 0;
	WCHAR *wp = wide(paths, &bad), *wn = wide(names, &bad);
	FileW files[MAX_FILES] = {0};
	ULONG n = 0;
	ULONG e = SUCCESS_SUCCESS;
	WCHAR wd = (WCHAR)(unsigned char)d;
	WCHAR *p = wp, *q = wn;
	while (!bad && p && *p) {
		if (n == MAX_FILES) {
			e = MAPI_E_TOO_MANY_FILES;
			break;
		}
		WCHAR *end = wcschr(p, wd);
		if (end)
			*end = 0;
		files[n].lpszPathName = p;
		if (q && *q) {
			WCHAR *qe = wcschr(q, wd);
			if (qe)
				*qe = 0;
			files[n].lpszFileName = q;
			q = qe ? qe + 1 : NULL;
		}
		n++;
		p = end ? end + 1 : NULL;
	}
	if (bad)
		e = MAPI_E_INSUFFICIENT_MEMORY;
	if (e == SUCCESS_SUCCESS) {
		MessageW m = {0};
		m.nFileCount = n;
		m.lpFiles = files;
		e = sendW(&m);
	}
	free(wp);
	free(wn);
	return e;
}

/* A session is nothing to Carrier: the person signs in in its window. */
ULONG WINAPI MAPILogon(ULONG_PTR ui, LPSTR profile, LPSTR password, FLAGS flags, ULONG reserved, LPLHANDLE session)
{
	(void)ui, (void)profile, (void)password, (void)flags, (void)reserved;
	if (session)
		*session = 1;
	return SUCCESS_SUCCESS;
}

ULONG WINAPI MAPILogoff(LHANDLE session, ULONG_PTR ui, FLAGS flags, ULONG reserved)
{
	(void)session, (void)ui, (void)flags, (void)reserved;
	return SUCCESS_SUCCESS;
}

/* Nothing here hands the caller memory to free. */
ULONG WINAPI MAPIFreeBuffer(LPVOID p)
{
	(void)p;
	return SUCCESS_SUCCESS;
}

/* Reading mail and the address book are not Carrier's. */
ULONG WINAPI MAPIResolveName(LHANDLE s, ULONG_PTR ui, LPSTR name, FLAGS f, ULONG r, lpMapiRecipDesc *out)
{
	(void)s, (void)ui, (void)name, (void)f, (void)r;
	if (out)
		*out = NULL;
	return MAPI_E_NOT_SUPPORTED;
}

ULONG WINAPI MAPIAddress(LHANDLE s, ULONG_PTR ui, LPSTR caption, ULONG nEdit, LPSTR labels, ULONG nRecips,
			 lpMapiRecipDesc recips, FLAGS f, ULONG r, LPULONG nNew, lpMapiRecipDesc *newRecips)
{
	(void)s, (void)ui, (void)caption, (void)nEdit, (void)labels, (void)nRecips, (void)recips, (void)f, (void)r;
	if (nNew)
		*nNew = 0;
	if (newRecips)
		*newRecips = NULL;
	return MAPI_E_NOT_SUPPORTED;
}

ULONG WINAPI MAPIDetails(LHANDLE s, ULONG_PTR ui, lpMapiRecipDesc recip, FLAGS f, ULONG r)
{
	(void)s, (void)ui, (void)recip, (void)f, (void)r;
	return MAPI_E_NOT_SUPPORTED;
}

ULONG WINAPI MAPIFindNext(LHANDLE s, ULONG_PTR ui, LPSTR type, LPSTR seed, FLAGS f, ULONG r, LPSTR id)
{
	(void)s, (void)ui, (void)type, (void)seed, (void)f, (void)r, (void)id;
	return MAPI_E_NOT_SUPPORTED;
}

ULONG WINAPI MAPIReadMail(LHANDLE s, ULONG_PTR ui, LPSTR id, FLAGS f, ULONG r, lpMapiMessage *out)
{
	(void)s, (void)ui, (void)id, (void)f, (void)r;
	if (out)
		*out = NULL;
	return MAPI_E_NOT_SUPPORTED;
}

ULONG WINAPI MAPISaveMail(LHANDLE s, ULONG_PTR ui, lpMapiMessage m, FLAGS f, ULONG r, LPSTR id)
{
	(void)s, (void)ui, (void)m, (void)f, (void)r, (void)id;
	return MAPI_E_NOT_SUPPORTED;
}

ULONG WINAPI MAPIDeleteMail(LHANDLE s, ULONG_PTR ui, LPSTR id, FLAGS f, ULONG r)
{
	(void)s, (void)ui, (void)id, (void)f, (void)r;
	return MAPI_E_NOT_SUPPORTED;
}
