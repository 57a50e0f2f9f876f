/**
 * A task's description through the real stack: markdown written with PATCH becomes rich-text nodes,
 * each block and inline construct in a form of its own with the markers removed, a document being
 * the blocks it is made of; a node array is kept as sent in both task shapes; null and '' clear it;
 * a node array nested too deeply is refused and the description kept.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/api.js';
import {
  createApiKeys,
  expectError,
  expectStatus,
  getTask,
  plainText,
  richTextProblems,
  type RichTextNode,
  type Task,
} from '../support/fixtures.js';
import { taskFixture } from '../support/task-fixture.js';

describe('tasks', () => {
  const fx = taskFixture();
  const { freshTask, listed } = fx;

  describe('descriptions', () => {
    let task: Task;

    beforeAll(async () => {
      task = await freshTask();
    });

    /** Writes a markdown description and returns the node array the API answers and then serves. */
    const markdown = async (text: string): Promise<RichTextNode[]> => {
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body: { description: text } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: expect.any(Array), updatedAt: expect.any(String) });
      const nodes = response.body.description!;
      expect(richTextProblems(nodes)).toStrictEqual([]);
      expect((await getTask(fx.key, task.id)).description).toStrictEqual(nodes);
      return nodes;
    };

    const blocks = {
      'heading 1': '# Title',
      'heading 2': '## Title',
      'heading 3': '### Title',
      paragraph: 'Title',
      'bullet list': '- Title',
      'numbered list': '1. Title',
      blockquote: '> Title',
    };
    const inlines = {
      bold: '**Word**',
      italic: '*Word*',
      'bold italic': '***Word***',
      strikethrough: '~~Word~~',
      'inline code': '`Word`',
      plain: 'Word',
    };

    /** Writes each construct alone, expects one block reading `text`, and answers each one's nodes as JSON. */
    const writeEach = async (constructs: Record<string, string>, text: string): Promise<Record<string, string>> => {
      const results: Record<string, string> = {};
      for (const [name, source] of Object.entries(constructs)) {
        const nodes = await markdown(source);
        expect({ name, text: plainText(nodes), blocks: nodes.length }).toStrictEqual({ name, text, blocks: 1 });
        results[name] = JSON.stringify(nodes);
      }
      return results;
    };

    it('turns each block construct into its own distinct rich-text form with the markers removed', async () => {
      const results = await writeEach(blocks, 'Title');
      // Seven constructs, seven different representations.
      expect(new Set(Object.values(results)).size).toBe(Object.keys(blocks).length);
    });

    it('turns each inline construct into its own distinct rich-text form with the markers removed', async () => {
      const results = await writeEach(inlines, 'Word');
      // Six constructs (plain text included), six different representations.
      expect(new Set(Object.values(results)).size).toBe(Object.keys(inlines).length);
    });

    it('keeps inline formatting inside a paragraph, as each construct alone produces it', async () => {
      const nodes = await markdown('Plain **bold** and *italic* and ***both*** and ~~struck~~ and `code` here.');
      expect(plainText(nodes)).toBe('Plain bold and italic and both and struck and code here.');
      expect(nodes).toHaveLength(1);
      for (const source of ['**bold**', '*italic*', '***both***', '~~struck~~', '`code`']) {
        const alone = await markdown(source);
        for (const inline of alone[0]!.children!) expect(nodes[0]!.children).toContainEqual(inline);
      }
    });

    it('keeps every item of bullet and numbered lists', async () => {
      expect(plainText(await markdown('- one\n- two\n- three'))).toBe('onetwothree');
      expect(plainText(await markdown('1. first\n2. second'))).toBe('firstsecond');
      expect(await markdown('- one\n- two')).not.toStrictEqual(await markdown('1. one\n2. two'));
    });

    it('separates blocks at blank lines: a document is the blocks it is made of, in order', async () => {
      const parts = [
        '# Heading one',
        '## Heading two',
        '### Heading three',
        '- bullet one\n- bullet two',
        '1. first\n2. second',
        'Plain **bold** and *italic* and ***both*** and ~~struck~~ and `code` here.',
        '> quoted text',
        'Last paragraph',
      ];
      const separately: RichTextNode[] = [];
      for (const part of parts) separately.push(...(await markdown(part)));
      const whole = await markdown(parts.join('\n\n'));
      expect(whole).toStrictEqual(separately);
      expect(plainText(whole)).toBe(
        'Heading one' +
          'Heading two' +
          'Heading three' +
          'bullet one' +
          'bullet two' +
          'first' +
          'second' +
          'Plain bold and italic and both and struck and code here.' +
          'quoted text' +
          'Last paragraph',
      );
      expect(await markdown('First\n\nSecond')).toStrictEqual([...(await markdown('First')), ...(await markdown('Second'))]);
    });

    it('accepts a rich-text node array and returns it as sent, in both task shapes', async () => {
      const nodes = await markdown('## Kept\n\nWith **bold** and `code`');
      await markdown('something else');
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body: { description: nodes } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: nodes, updatedAt: expect.any(String) });
      expect((await listed(fx.project.id, task.id))!.description).toStrictEqual(nodes);
    });

    it('clears the description with null', async () => {
      await markdown('to be cleared');
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body: { description: null } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: null, updatedAt: expect.any(String) });
      expect(await getTask(fx.key, task.id)).toStrictEqual({ ...task, description: null, updatedAt: expect.any(String) });
      expect((await listed(fx.project.id, task.id))!.description).toBeNull();
    });

    it('stores an empty-string description as null', async () => {
      await markdown('to be emptied');
      const response = await api<Task>('PATCH', `/v1/tasks/${task.id}`, { credentials: fx.key, body: { description: '' } });
      expectStatus(response, 200);
      expect(response.body).toStrictEqual({ ...task, description: null, updatedAt: expect.any(String) });
      expect(await getTask(fx.key, task.id)).toStrictEqual({ ...task, description: null, updatedAt: expect.any(String) });
    });

    it.each([21, 5_000, 20_000])('refuses a node array nested %i deep with 400 and keeps the description', async (depth) => {
      // A key of its own: the shared one may be at its rate limit after this file's many calls.
      const own = (await createApiKeys(fx.ws, 1))[0]!;
      expectStatus(await api('PATCH', `/v1/tasks/${task.id}`, { credentials: own, body: { description: 'kept as it was' } }), 200);
      const before = await getTask(own, task.id);
      // Built as text: JSON.stringify itself would overflow the stack on the deepest one.
      const rawBody = `{"description":[${'{"type":"block-quote","children":['.repeat(depth - 1)}{"type":"text","text":"deep","children":[]}${']}'.repeat(depth - 1)}]}`;
      const response = await api('PATCH', `/v1/tasks/${task.id}`, { credentials: own, rawBody, headers: { 'content-type': 'application/json' } });
      expectError(response, 400);
      expect((response.body as { error: string }).error).toMatch(/nested too deeply/);
      expect(await getTask(own, task.id)).toStrictEqual(before);
    });
  });
});
