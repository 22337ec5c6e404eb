"""read_in_batches: which failures cost one member, and which fail the read (the layer's rules, without a server).

The readers are plain functions raising the layer's own errors, as its session raises them for an answer; the
servers' suites prove the same path against a real Radicale behind a failing proxy.
"""

from __future__ import annotations

import pytest

from webdav_core import BackendError, Errors, Forbidden, NotFound, Unauthenticated
from webdav_core.batches import failed_whole, read_in_batches

pytestmark = pytest.mark.anyio


def test_failed_whole_is_a_5xx_or_an_unreadable_2xx() -> None:
    assert failed_whole(BackendError("x", 500))
    assert failed_whole(BackendError("x", 207))
    assert not failed_whole(Forbidden("x", 403))
    assert not failed_whole(BackendError("x", None))


async def test_a_batch_failed_as_a_whole_is_read_one_by_one_and_the_bad_member_named() -> None:
    batches: list[list[str]] = []

    async def many(batch: list[str]) -> list[str]:
        batches.append(batch)
        if "/c/bad" in batch:
            raise BackendError("the server answered 500", 500)
        return batch

    async def one(href: str) -> str:
        if href == "/c/bad":
            raise BackendError("the server answered 500", 500)
        if href == "/c/gone":
            raise NotFound("gone", 404)
        return href

    hrefs = ["/c/a", "/c/b", "/c/bad", "/c/gone", "/c/e"]
    read = await read_in_batches(hrefs, many, one, errors=Errors(), size=2, where="/c/")
    assert batches == [["/c/a", "/c/b"], ["/c/bad", "/c/gone"], ["/c/e"]]
    assert read.found == ["/c/a", "/c/b", "/c/e"]
    assert [href for href, _ in read.failed] == ["/c/bad"]
    assert "500" in read.failed[0][1]


@pytest.mark.parametrize(
    "error", [Forbidden("refused", 403), BackendError("no answer", None)], ids=["4xx batch", "no answer"]
)
async def test_a_batch_refused_or_unanswered_fails_the_read(error: Exception) -> None:
    async def many(batch: list[str]) -> list[str]:
        raise error

    async def one(href: str) -> str:
        return href

    with pytest.raises(type(error)):
        await read_in_batches(["/c/a"], many, one, errors=Errors(), size=10, where="/c/")


@pytest.mark.parametrize(
    "error", [Unauthenticated("401", 401), BackendError("no answer", None)], ids=["401", "no answer"]
)
async def test_a_member_whose_read_is_refused_for_the_account_or_unanswered_fails_the_read(error: Exception) -> None:
    async def many(batch: list[str]) -> list[str]:
        raise BackendError("the server answered 502", 502)

    async def one(href: str) -> str:
        raise error

    with pytest.raises(type(error)):
        await read_in_batches(["/c/a", "/c/b"], many, one, errors=Errors(), size=10, where="/c/")
