# A blog post: a title and a body.
class Article < ApplicationRecord
  scope :newest, -> { order(created_at: :desc, id: :desc) }
end
