"""A schemas file is used only where it must say what the SDK derives (approval_core.serving.tool_schemas).

A small server of three tools: one with a result model, one without a structured result, one whose result
the SDK wraps (which the file never holds, so it is always derived). Its file is written by
``derived_tool_schemas``; then each guard is broken on its own (other versions, a tool whose arguments or
result changed, a Context parameter named wrongly, a file that is no JSON) and the tool it concerns must be
derived by the SDK again, the other one still taken from the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import CallToolResult, TextContent

from approval_core.serving import tool_schemas
from approval_core.serving.tool_schemas import derived_tool_schemas, install_tool_schemas, main, read_tool_schemas
from core_serving import Found

pytestmark = pytest.mark.anyio


def build(path: Path | None, *, extra_argument: bool = False) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("schemas")
    install_tool_schemas(server, path)

    if extra_argument:

        @server.tool()
        async def find(text: str, ctx: Context, limit: int = 5) -> Found:
            """Find a name."""
            return Found(name=text)

    else:

        @server.tool()
        async def find(text: str, ctx: Context) -> Found:
            """Find a name."""
            return Found(name=text)

    @server.tool()
    def ping() -> CallToolResult:
        """Answer pong (no structured result)."""
        return CallToolResult(content=[TextContent(type="text", text="pong")])

    @server.tool()
    def shout(text: str) -> str:
        """The text in capitals: a result the SDK wraps, which no file entry holds."""
        return text.upper()

    return server


@pytest.fixture
def written(tmp_path: Path) -> Path:
    path = tmp_path / tool_schemas.SCHEMAS_FILE
    path.write_text(json.dumps(derived_tool_schemas(lambda: build(None))), encoding="utf-8")
    return path


def derived_names(monkeypatch: pytest.MonkeyPatch, make: Any) -> list[str]:
    """The tools the SDK derived while ``make()`` built a server."""
    derived: list[str] = []
    original = Tool.from_function.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Tool], fn: Any, *args: Any, **kwargs: Any) -> Tool:
        derived.append(kwargs.get("name") or fn.__name__)
        return original(cls, fn, *args, **kwargs)

    monkeypatch.setattr(Tool, "from_function", classmethod(counted))
    make()
    return derived


def test_the_file_holds_both_tools_with_the_context_parameter_and_result_model(written: Path) -> None:
    entries = read_tool_schemas(written)
    assert sorted(entries) == ["find", "ping"]  # not shout, whose result is wrapped
    assert entries["ping"]["output"] is None
    assert entries["ping"]["output_model"] is None
    assert entries["find"]["context"] == "ctx"
    assert entries["find"]["output_model"] == "core_serving:Found"
    assert set(entries["find"]["input"]["properties"]) == {"text"}
    assert entries["find"]["output"]["properties"]["name"]["description"] == "The name found."


async def test_tools_from_the_file_are_listed_and_called_as_derived_ones(
    written: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert derived_names(monkeypatch, lambda: build(written)) == ["shout"]
    from_file, derived = build(written), build(None)
    listed = [t.model_dump() for t in await from_file.list_tools()]
    assert listed == [t.model_dump() for t in await derived.list_tools()]
    assert (await from_file.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
    result = await from_file.call_tool("find", {"text": "ada"})
    assert result.structured_content == {"name": "ada", "count": 0}
    with pytest.raises(ToolError, match="findArguments"):  # arguments still checked by the SDK's model
        await from_file.call_tool("find", {"text": 5})


def test_a_file_of_other_versions_is_not_used(written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = json.loads(written.read_text(encoding="utf-8"))
    document["versions"]["pydantic"] = "1.0"
    written.write_text(json.dumps(document), encoding="utf-8")
    assert read_tool_schemas(written) == {}
    assert derived_names(monkeypatch, lambda: build(written)) == ["find", "ping", "shout"]


@pytest.mark.parametrize("content", ["", "{", "[]", '{"versions": 1}'])
def test_a_file_that_is_not_a_schemas_file_is_not_used(written: Path, content: str) -> None:
    written.write_text(content, encoding="utf-8")
    assert read_tool_schemas(written) == {}


def test_no_file_derives_every_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "absent.json"
    assert derived_names(monkeypatch, lambda: build(missing)) == ["find", "ping", "shout"]


def test_a_tool_whose_arguments_changed_is_derived(written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert derived_names(monkeypatch, lambda: build(written, extra_argument=True)) == ["find", "shout"]


def test_a_tool_whose_result_model_changed_is_derived(written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = json.loads(written.read_text(encoding="utf-8"))
    document["tools"]["find"]["output_model"] = "core_serving:Shorter"
    written.write_text(json.dumps(document), encoding="utf-8")
    assert derived_names(monkeypatch, lambda: build(written)) == ["find", "shout"]


def test_a_context_parameter_the_tool_lacks_is_derived(written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = json.loads(written.read_text(encoding="utf-8"))
    document["tools"]["find"]["context"] = "context"
    written.write_text(json.dumps(document), encoding="utf-8")
    assert derived_names(monkeypatch, lambda: build(written)) == ["find", "shout"]


@pytest.mark.parametrize(("tool", "annotation"), [("ping", "return"), ("find", "text")])
def test_a_tool_annotated_otherwise_than_the_file_says_is_derived(
    written: Path, monkeypatch: pytest.MonkeyPatch, tool: str, annotation: str
) -> None:
    # ping has no outputSchema in the file: a result model it gained shows in its return annotation only.
    document = json.loads(written.read_text(encoding="utf-8"))
    document["tools"][tool]["annotations"][annotation] = "Annotated[CallToolResult, Found]"
    written.write_text(json.dumps(document), encoding="utf-8")
    assert derived_names(monkeypatch, lambda: build(written)) == sorted({tool, "shout"})


def test_check_fails_on_a_server_package_whose_file_is_out_of_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "tiny_mcp"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "server.py").write_text(
        "from mcp.server.mcpserver import MCPServer\n"
        "from mcp_types import CallToolResult\n"
        "from approval_core.serving.tool_schemas import install_tool_schemas, SCHEMAS_FILE\n"
        "from pathlib import Path\n"
        "def build_server(settings):\n"
        "    server = MCPServer('tiny')\n"
        "    install_tool_schemas(server, Path(__file__).with_name(SCHEMAS_FILE))\n"
        "    @server.tool()\n"
        "    def ping(text: str) -> CallToolResult:\n"
        "        '''Answer.'''\n"
        "        return CallToolResult(content=[])\n"
        "    return server\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["--check", "tiny_mcp"]) == 1
    assert "tiny_mcp/tool_schemas.json is out of date" in capsys.readouterr().err
    assert main(["tiny_mcp"]) == 0
    assert main(["--check", "tiny_mcp"]) == 0
    assert set(read_tool_schemas(package / tool_schemas.SCHEMAS_FILE)) == {"ping"}
