-- Headless check of init.lua with a real clperf server: opens $CLPERF_NVIM_FILE, waits for clperf's
-- diagnostics, asks for the hover on the first kernel's name and the code lenses, writes JSON to
-- $CLPERF_NVIM_OUT, quits. Run by test_neovim.py.
local out = { diagnostics = {}, errors = {} }
local function finish()
  local f = io.open(os.getenv("CLPERF_NVIM_OUT"), "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qall!")
end
local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("CLPERF_NVIM_FILE")))
  out.filetype = vim.bo.filetype
  local bufnr = vim.api.nvim_get_current_buf()
  out.got_diagnostics = vim.wait(90000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.source == "clperf" then return true end
    end
    return false
  end, 100)
  out.clients = vim.tbl_count(vim.lsp.buf_get_clients(bufnr)) -- attached once initialized
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { line = d.lnum, source = d.source, code = d.code, message = d.message })
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local line, col = tonumber(os.getenv("CLPERF_NVIM_LINE")), tonumber(os.getenv("CLPERF_NVIM_COL"))
  local hover = vim.lsp.buf_request_sync(bufnr, "textDocument/hover",
    { textDocument = { uri = uri }, position = { line = line, character = col } }, 30000)
  for _, r in pairs(hover or {}) do
    if r.error then table.insert(out.errors, r.error.message) end
    if r.result and r.result.contents then out.hover = r.result.contents.value or r.result.contents end
  end
  local lenses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeLens", { textDocument = { uri = uri } }, 30000)
  out.lenses = {}
  for _, r in pairs(lenses or {}) do
    for _, l in ipairs(r.result or {}) do
      if l.command then table.insert(out.lenses, l.command.title) end
    end
  end
end)
if not ok then table.insert(out.errors, tostring(err)) end
finish()
