//! Recording fake MCP server; all logic lives in `fakes::mcp`.

fn main() {
    std::process::exit(fakes::mcp::main_with_args(std::env::args().skip(1).collect()))
}
