-- clperf in Neovim 0.7+ (Debian 12 ships 0.7.2, which has no vim.lsp.start): put this in your init.lua.
-- The interpreter must have clperf installed: set vim.g.clperf_python (or $CLPERF_PYTHON), else python3.
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  pattern = { "*.cl", "*.ocl" },
  command = "set filetype=opencl", -- not setfiletype: Vim's own rules call *.cl Lisp
})

local clients = {} -- one server per project root
local function clperf_attach(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(file, ":p:h")
  local git = vim.fn.finddir(".git", dir .. ";")
  local root = git ~= "" and vim.fn.fnamemodify(git, ":p:h:h") or dir
  if not clients[root] then
    clients[root] = vim.lsp.start_client({
      name = "clperf",
      cmd = { vim.g.clperf_python or os.getenv("CLPERF_PYTHON") or "python3", "-m", "clperf.server", "--stdio" },
      root_dir = root,
      -- answered to the server's workspace/configuration requests (section "clperf", see docs/server.md)
      settings = { clperf = { device = "", buildOptions = "", benchmarkPolicy = "interactive" } },
      on_exit = function() clients[root] = nil end,
    })
  end
  vim.lsp.buf_attach_client(bufnr, clients[root])
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "opencl",
  callback = function(args) clperf_attach(args.buf) end,
})
-- Neovim asks for code lenses only when told to: estimates above each kernel.
vim.api.nvim_create_autocmd({ "BufEnter", "BufWritePost", "CursorHold" }, {
  pattern = { "*.cl", "*.ocl" },
  callback = function() vim.lsp.codelens.refresh() end,
})
-- :ClperfBenchmark runs the kernel under the cursor on the local OpenCL device; the result shows in its lens.
vim.api.nvim_create_user_command("ClperfBenchmark", function()
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  vim.lsp.buf.execute_command({ command = "clperf.benchmark",
    arguments = { { uri = vim.uri_from_bufnr(0), line = line } } })
end, {})
