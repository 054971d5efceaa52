-- Drives a headless Neovim against serq-lsp, as a user would: the buffer is a serQ
-- program opened by the set-up of docs/editors.md. Each step writes one line to the file
-- named by $SERQ_NVIM_RESULT: `ok STEP: detail`, `skip STEP: reason` or `fail STEP: why`;
-- the first failure ends the run. Works on Neovim 0.7 (Debian 12) and later.

local out = assert(io.open(os.getenv('SERQ_NVIM_RESULT'), 'w'))
local TIMEOUT = tonumber(os.getenv('SERQ_NVIM_TIMEOUT') or '30000')

local function say(status, step, detail)
  out:write(status .. ' ' .. step .. ': ' .. (detail or ''):gsub('\n', ' ') .. '\n')
  out:flush()
end

local function fail(step, why)
  say('fail', step, why)
  out:close()
  vim.cmd('cquit! 1')
end

local function wait(step, what, condition)
  if not vim.wait(TIMEOUT, condition, 50) then
    fail(step, 'timed out waiting for ' .. what)
  end
end

local function clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.lsp.buf_get_clients(bufnr)
end

local function find(needle, after_line)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for i = (after_line or 0) + 1, #lines do
    local col = lines[i]:find(needle, 1, true)
    if col then
      return i - 1, col - 1 -- 0-based line and byte column (the example is ASCII)
    end
  end
  fail('find', 'no `' .. needle .. '` in the buffer')
end

local function errors()
  return vim.diagnostic.get(0, { severity = vim.diagnostic.severity.ERROR })
end

local bufnr = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(bufnr)

-- attach: the FileType autocmd of the set-up started serq-lsp for this buffer
local client
wait('attach', 'serq-lsp to attach', function()
  local found = clients(bufnr)
  for _, c in pairs(found) do
    if c.name == 'serq' and c.initialized ~= false and c.server_capabilities then
      client = c
      return true
    end
  end
  return false
end)
say('ok', 'attach', 'filetype ' .. vim.bo.filetype .. ', client ' .. client.name)

-- the example checks clean
wait('clean', 'the first diagnostics', function()
  return client.server_capabilities ~= nil and #errors() == 0
end)
vim.wait(500) -- let the first publication arrive
if #errors() > 0 then
  fail('clean', 'the example has errors: ' .. errors()[1].message)
end
say('ok', 'clean', 'no errors')

-- introduce an error: a `;` missing after a `let`, and wait for its diagnostic
local line = find('let ND = 2;')
local original = vim.api.nvim_buf_get_lines(0, line, line + 1, false)[1]
vim.api.nvim_buf_set_lines(0, line, line + 1, false, { 'let ND = 2' })
wait('diagnostic', 'a diagnostic for the missing `;`', function()
  return #errors() > 0
end)
local diagnostic = errors()[1]
say('ok', 'diagnostic', 'line ' .. diagnostic.lnum + 1 .. ': ' .. diagnostic.message)
vim.api.nvim_buf_set_lines(0, line, line + 1, false, { original })
wait('diagnostic', 'the diagnostic to clear', function()
  return #errors() == 0
end)

-- hover a serving form: the kernel it expands to
local fline, fcol = find('prefill (prompt - c)')
local params = { textDocument = { uri = uri }, position = { line = fline, character = fcol } }
local answers = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, TIMEOUT)
local text = ''
for _, answer in pairs(answers or {}) do
  if answer.result and answer.result.contents then
    local contents = answer.result.contents
    text = text .. (type(contents) == 'table' and (contents.value or vim.inspect(contents)) or contents)
  end
end
if not text:find('expands to', 1, true) then
  fail('hover', 'the hover does not show the kernel: ' .. text)
end
say('ok', 'hover', text:match('[^\n]*expands to[^\n]*'))

-- jump to a pool's definition: `kv` in `growing kv` of queue P is P's own pool
local queue_line = find('queue P[NP]')
local pool_line = find('pool kv {', queue_line)
local use_line, use_col = find('growing kv;', queue_line)
use_col = use_col + #'growing '
vim.api.nvim_win_set_cursor(0, { use_line + 1, use_col })
vim.lsp.buf.definition()
wait('definition', 'the cursor to reach `pool kv`', function()
  return vim.api.nvim_win_get_cursor(0)[1] == pool_line + 1
end)
local cursor = vim.api.nvim_win_get_cursor(0)
say('ok', 'definition', 'jumped to line ' .. cursor[1] .. ', column ' .. cursor[2])

-- format the buffer, when the server formats
if not client.server_capabilities.documentFormattingProvider then
  say('skip', 'format', 'serq-lsp does not advertise documentFormattingProvider')
else
  local function format()
    if vim.lsp.buf.format then
      vim.lsp.buf.format({ bufnr = bufnr, async = false, timeout_ms = TIMEOUT })
    else
      vim.lsp.buf.formatting_sync(nil, TIMEOUT)
    end
  end
  local before = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  format()
  local once = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  format()
  local twice = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if once ~= twice then
    fail('format', 'formatting twice changed the buffer again')
  end
  vim.wait(1000)
  if #errors() > 0 then
    fail('format', 'the formatted buffer has errors: ' .. errors()[1].message)
  end
  say('ok', 'format', (before == once and 'already formatted' or 'reformatted') .. ', idempotent')
end

say('ok', 'done', '')
out:close()
vim.cmd('qall!')
