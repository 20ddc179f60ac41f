-- clperf in Neovim 0.7+ (Debian 12 ships 0.7.2, which has no vim.lsp.start): put this in your init.lua.
-- The interpreter must have clperf installed: set vim.g.clperf_python (or $CLPERF_PYTHON), else python3.
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  pattern = { "*.cl", "*.ocl" },
  command = "set filetype=opencl", -- not setfiletype: Vim's own rules call *.cl Lisp
})

-- Neovim shows code lenses (the estimate above each kernel) only when it asks for them, and 0.7 never
-- asks again after a request sent before the server was ready: ask once attached, then after every
-- analysis (its diagnostics come with it) and when the buffer is entered again.
local function refresh_lenses(bufnr)
  if bufnr == vim.api.nvim_get_current_buf() and vim.b[bufnr].clperf_attached then
    vim.lsp.codelens.refresh()
  end
end

local function on_attach(_, bufnr)
  vim.b[bufnr].clperf_attached = true
  vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = bufnr, desc = "clperf: estimate breakdown" })
  refresh_lenses(bufnr)
end

local clients = {} -- one server per project root
local function clperf_attach(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(file, ":p:h")
  local git = vim.fn.finddir(".git", dir .. ";")
  local root = git ~= "" and vim.fn.fnamemodify(git, ":p:h:h") or dir
  if not clients[root] then
    clients[root] = vim.lsp.start_client({
      name = "clperf",
      -- -P: never import from the project folder (Neovim's working directory)
      cmd = { vim.g.clperf_python or os.getenv("CLPERF_PYTHON") or "python3", "-P", "-m", "clperf.server", "--stdio" },
      root_dir = root,
      -- answered to the server's workspace/configuration requests (section "clperf", see docs/server.md)
      settings = { clperf = { device = "", buildOptions = "", benchmarkPolicy = "interactive" } },
      on_attach = on_attach,
      on_exit = function() clients[root] = nil end,
    })
  end
  vim.lsp.buf_attach_client(bufnr, clients[root])
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "opencl",
  callback = function(args) clperf_attach(args.buf) end,
})
vim.api.nvim_create_autocmd({ "BufEnter", "DiagnosticChanged" }, {
  pattern = { "*.cl", "*.ocl" },
  callback = function(args) refresh_lenses(args.buf) end,
})

-- :ClperfBenchmark runs the kernel under the cursor (:ClperfBenchmark! every kernel of the file) on the
-- local OpenCL device, prints the result and shows it in the kernel's lens.
vim.api.nvim_create_user_command("ClperfBenchmark", function(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local target = { uri = vim.uri_from_bufnr(bufnr) }
  if not opts.bang then target.line = vim.api.nvim_win_get_cursor(0)[1] - 1 end
  vim.notify("clperf: benchmarking…")
  vim.lsp.buf_request(bufnr, "workspace/executeCommand", { command = "clperf.benchmark", arguments = { target } },
    function(err, result)
      if err or result == nil or result.error then
        vim.notify("clperf: " .. (err and err.message or result and result.error or "no answer"), vim.log.levels.ERROR)
      else
        for _, run in ipairs(result) do vim.notify("clperf: " .. run.summary) end
      end
      refresh_lenses(bufnr)
    end)
end, { bang = true })
