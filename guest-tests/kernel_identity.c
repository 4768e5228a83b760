// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel that booted is the one this build made, at the level the
 * harness expects.  The host passes EXPECT_RELEASE and EXPECT_VERSION (from
 * the build's kernel.release and utsversion.h) and EXPECT_LEVEL (qemu or
 * uml); a stale image, a wrong -kernel or a UML that silently failed to
 * start would all show up here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"

static const char *expect(struct __test_metadata *_metadata, const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v)
		TH_LOG("%s is not set by the harness", name);
	return v;
}

/* Does /proc/cpuinfo say "User Mode Linux"?  -1 if it cannot be read. */
static int cpuinfo_is_uml(void)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int uml = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "vendor_id", 9) && strstr(line, "User Mode Linux"))
			uml = 1;
	fclose(f);
	return uml;
}

TEST(release_matches_build)
{
	const char *want = expect(_metadata, "EXPECT_RELEASE");
	struct utsname u;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, uname(&u));
	EXPECT_STREQ(want, u.release);
}

TEST(version_matches_build)
{
	const char *want = expect(_metadata, "EXPECT_VERSION");
	struct utsname u;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, uname(&u));
	EXPECT_STREQ(want, u.version);
}

TEST(level_matches)
{
	const char *level = expect(_metadata, "EXPECT_LEVEL");
	int uml = cpuinfo_is_uml();

	ASSERT_NE(NULL, level);
	ASSERT_NE(-1, uml);
	if (!strcmp(level, "uml")) {
		EXPECT_EQ(1, uml);
	} else {
		ASSERT_STREQ("qemu", level);
		EXPECT_EQ(0, uml);
	}
}

TEST_HARNESS_MAIN
