# Every page reads SQLite and renders ERB through the layout: the work a real Rails request does.
class ArticlesController < ApplicationController
  def index
    @articles = Article.newest.limit(10)
  end

  def show
    @article = Article.find(params[:id])
  end

  def about
    @count = Article.count
  end
end
