-- Headless check of init.lua with a real clperf server: opens $CLPERF_NVIM_FILE and records what a user
-- sees, driven only through what init.lua sets up (no lens refresh of its own): clperf's diagnostics, the
-- code lenses drawn in the buffer, the float that `K` opens on the first kernel's name, and what
-- :ClperfBenchmark prints. Writes JSON to $CLPERF_NVIM_OUT, then quits. Run by test_neovim.py.
local out = { diagnostics = {}, errors = {}, lenses = {}, timeline = {} }
local started = vim.loop.hrtime()
local function mark(what) out.timeline[what] = math.floor((vim.loop.hrtime() - started) / 1e6) end
local function finish()
  local f = io.open(os.getenv("CLPERF_NVIM_OUT"), "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qall!")
end

-- The lens text drawn on each line: Neovim 0.7 draws a line's lenses as virtual text, " | " between them.
local function drawn_lenses(bufnr)
  local drawn = {}
  for name, ns in pairs(vim.api.nvim_get_namespaces()) do
    if name:find("^vim_lsp_codelens") then
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
        local text = {}
        for _, chunk in ipairs(m[4].virt_text or {}) do table.insert(text, chunk[1]) end
        table.insert(drawn, { line = m[2], text = table.concat(text) })
      end
    end
  end
  table.sort(drawn, function(a, b) return a.line < b.line end)
  return drawn
end

local function drawn_with(bufnr, needle)
  for _, l in ipairs(drawn_lenses(bufnr)) do
    if l.text:find(needle, 1, true) then return true end
  end
  return false
end

local function messages() return vim.api.nvim_exec("messages", true) end

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
  mark("diagnostics")
  out.clients = vim.tbl_count(vim.lsp.buf_get_clients(bufnr)) -- attached once initialized
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { line = d.lnum, source = d.source, code = d.code, message = d.message })
  end
  -- the estimate lens, drawn: on a fresh machine after the local device's peaks are measured
  out.estimate_drawn = vim.wait(90000, function() return drawn_with(bufnr, "≈") end, 100)
  mark("estimate lens")
  out.lenses_before_benchmark = drawn_lenses(bufnr)

  local line, col = tonumber(os.getenv("CLPERF_NVIM_LINE")), tonumber(os.getenv("CLPERF_NVIM_COL"))
  out.k_mapping = vim.fn.maparg("K", "n", false, true).desc
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  vim.cmd("normal K")
  local float
  vim.wait(30000, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= "" then float = w return true end
    end
    return false
  end, 50)
  if float then
    out.hover = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), "\n")
    vim.api.nvim_win_close(float, true)
  end

  -- :ClperfBenchmark on the same kernel: the result printed, then drawn in its lens
  vim.cmd("ClperfBenchmark")
  out.benchmark_printed = vim.wait(180000, function() return messages():find("clperf: fir8: ", 1, true) ~= nil end, 100)
  mark("benchmark printed")
  out.messages = messages()
  out.measured_drawn = vim.wait(30000, function() return drawn_with(bufnr, "measured ") end, 100)
  out.lenses = drawn_lenses(bufnr)
end)
if not ok then table.insert(out.errors, tostring(err)) end
finish()
