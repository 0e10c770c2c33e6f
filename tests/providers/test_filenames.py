"""Provider release file names, table-driven: one parser and one formatter for each."""

from __future__ import annotations

import pytest

from gitreg.providers.filenames import PackageFile, ReleaseFile, platform_problem


@pytest.mark.parametrize(
    ("name", "package"),
    [
        (
            "terraform-provider-widget_1.0.0_linux_amd64.zip",
            PackageFile("widget", "1.0.0", "linux", "amd64"),
        ),
        (
            "terraform-provider-my-widget_2.1.0-rc.1+build.5_darwin_arm64.zip",
            PackageFile("my-widget", "2.1.0-rc.1+build.5", "darwin", "arm64"),
        ),
        (  # the version is what the name says; callers parse it (and report a bad one)
            "terraform-provider-widget_1.0_windows_386.zip",
            PackageFile("widget", "1.0", "windows", "386"),
        ),
    ],
)
def test_good_package_names(name: str, package: PackageFile) -> None:
    assert PackageFile.parse(name) == package
    assert package.name == name == str(package)
    assert PackageFile.find(name, package.type) == package
    assert PackageFile.find(name, "other") is None


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("terraform-provider-widget_1.0.0_linux_amd64.tar.gz", "is not named"),
        ("terraform-widget_1.0.0_linux_amd64.zip", "is not named"),
        ("terraform-provider-widget_1.0.0_linux.zip", "is not named"),
        ("terraform-provider-widget_1.0.0_linux_amd64_extra.zip", "is not named"),
        ("terraform-provider-_1.0.0_linux_amd64.zip", "is not named"),
        ("terraform-provider-widget__linux_amd64.zip", "is not named"),
        ("terraform-provider-widget_../x_linux_amd64.zip", "is not named"),
        ("terraform-provider-widget_1.0.0_Linux_amd64.zip", "not a platform like linux/amd64"),
        ("terraform-provider-widget_1.0.0_linux_.zip", "not a platform like linux/amd64"),
        ("terraform-provider-widget_1.0.0_linux_" + "a" * 33 + ".zip", "not a platform"),
        ("../../../../escaped_linux_amd64.zip", "is not named"),
    ],
)
def test_bad_package_names(name: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        PackageFile.parse(name)
    assert message in str(caught.value)
    assert PackageFile.find(name, "widget") is None


@pytest.mark.parametrize(
    ("name", "found"),
    [
        (
            "terraform-provider-widget_1.0.0_SHA256SUMS",
            ReleaseFile("widget", "1.0.0", "SHA256SUMS"),
        ),
        (
            "terraform-provider-widget_1.0.0_SHA256SUMS.sig",
            ReleaseFile("widget", "1.0.0", "SHA256SUMS.sig"),
        ),
        (
            "terraform-provider-widget_1.0.0_manifest.json",
            ReleaseFile("widget", "1.0.0", "manifest.json"),
        ),
        ("terraform-provider-widget_1.0.0_SHA256SUMS.asc", None),
        ("terraform-provider-widget_1.0.0_linux_amd64.zip", None),
        ("terraform-provider-widgets_1.0.0_SHA256SUMS", None),  # another provider's
        ("terraform-provider-widget__SHA256SUMS", None),
    ],
)
def test_release_file_names(name: str, found: ReleaseFile | None) -> None:
    assert ReleaseFile.find(name, "widget") == found
    if found is not None:
        assert found.name == name


@pytest.mark.parametrize(
    ("os_name", "arch", "good"),
    [("linux", "amd64", True), ("windows", "386", True), ("..", "amd64", False), ("a", "", False)],
)
def test_platforms(os_name: str, arch: str, good: bool) -> None:
    assert (platform_problem(os_name, arch) is None) is good
